// Package telemetry is mcpx-fw's operational surface: every Prometheus
// metric the firewall exports, the health checks an orchestrator asks
// (/healthz, /readyz) and the status document `mcpx-fw status` prints, all
// served by one http.Handler.
//
// It is a leaf: it imports the Prometheus client and the standard library
// only. What it reports about the engine and the store it reads at scrape
// or request time through the funcs of Sources, which the caller (cmd)
// wires, so a scrape of a replica sharing PostgreSQL sees what the store
// holds, not what this process remembers. What only this process knows
// (decisions it made, its upstream sessions, its refusals) the engine and
// the relay record through the nil-safe methods of *Metrics: a nil
// *Metrics records nothing, so tests and CLI paths need none.
//
// Every label value comes from the config (server and window names; a
// name not configured is reported as "other") or from mcpx-fw's own fixed
// vocabularies, never from what an upstream wrote, so an upstream can
// neither grow the series without bound nor put its words in front of an
// operator through a dashboard.
package telemetry
