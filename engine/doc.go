// Package engine decides what an upstream asks of the host (sampling,
// elicitation, roots) and the host's answer to it: it runs structural
// validation, reads the server's usage, builds the policy input document,
// evaluates the Rego policy, and commits every decision (with its usage
// and, for an escalation, its review item) to the store in one transaction,
// then to the decision log. A decision that charges usage reads it,
// evaluates and commits in its server's turn (review.UsageReader.Charge),
// so budgets are exact however many goroutines, processes or replicas
// decide for one server at once.
//
// It returns a Verdict for everything, never a bare error: an error is one
// of the four outcomes (pass, escalate, blocker, error) and fails closed.
// Preview decides through the same code without recording anything, which
// is what `mcpx-fw policy eval` shows. Watch reloads the policy when its
// files change, swapping it atomically and keeping the old one when the
// new one does not compile.
//
// engine imports validate and engine/review; it must not import relay, cmd
// or the MCP SDK.
package engine
