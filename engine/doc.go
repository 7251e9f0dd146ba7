// Package engine decides sampling requests and results: it runs structural
// validation, builds the policy input document, evaluates the Rego policy,
// opens review items for escalations and records every decision.
//
// It returns a Verdict for everything, never a bare error: an error is one
// of the four outcomes (pass, escalate, blocker, error) and fails closed.
//
// engine imports validate and engine/review; it must not import relay, cmd
// or the MCP SDK.
package engine
