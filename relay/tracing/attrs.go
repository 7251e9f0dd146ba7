package tracing

import "go.opentelemetry.io/otel/attribute"

// The attributes of the firewall's spans. Their values are the firewall's
// own words and the operator's config (a server's configured name, a
// kind, a stage, an outcome, a decision or review id, a policy revision,
// reason codes): never text an upstream or a host wrote, which could
// carry a prompt, a form's answer or a completion into the trace backend.
const (
	Server         = attribute.Key("mcpxfw.server")
	Kind           = attribute.Key("mcpxfw.kind")
	Stage          = attribute.Key("mcpxfw.stage")
	Outcome        = attribute.Key("mcpxfw.outcome")
	DecisionID     = attribute.Key("mcpxfw.decision_id")
	ReviewID       = attribute.Key("mcpxfw.review_id")
	PolicyRevision = attribute.Key("mcpxfw.policy.revision")
	ReasonCodes    = attribute.Key("mcpxfw.reason_codes")
	AnsweredBy     = attribute.Key("mcpxfw.answered_by")
	// LinkFrom marks a link as a peer's claim, not the firewall's own.
	LinkFrom = attribute.Key("mcpxfw.link.from")
	// Method is the host request's method, from the SDK's fixed set
	// (OpenTelemetry's MCP conventions name it mcp.method.name).
	Method = attribute.Key("mcp.method.name")
)
