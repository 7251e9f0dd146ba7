// Package demopeer holds the peers of `mcpx-fw demo`: a host that answers
// sampling and elicitation with functions, and an upstream whose two tools
// push the requests the demo shows (sample, elicit) and report what came
// back. It ships in the binary, so it holds nothing else: no tool that
// sends raw bytes, floods, or attacks the firewall (relay/peer, the test
// peers, holds those and is never linked into mcpx-fw; a test keeps it so).
//
// It speaks through the Go MCP SDK, so it lives under relay/, the only
// place that imports it; its API uses plain JSON so callers need not.
package demopeer
