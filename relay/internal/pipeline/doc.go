// Package pipeline decides one request an upstream makes of the host
// (sampling, elicitation, roots), from its description to the checked
// answer: describe it (Describe), decide it (Decide: the admission slot,
// a decision worker, the engine, the wait for a review, the settlement),
// ask the host or the operator for the answer (Run, through an Asker),
// check the answer (Check) and settle that the same way. The kinds differ
// only through the table in kinds.go.
//
// Its dependencies are named in Deps (the engine, the review store, the
// admission gate, metrics, tracer, logger, host timeout) and each request
// in a Source (the server, the host it asks, the origin, the asker). It
// reaches no link, bridge, session or sealer of the relay: the legacy
// push, the bridge and the 2026-07-28 hand-back call it, and every refusal
// it returns comes from package refusal.
package pipeline
