package validate

// Era is an MCP protocol revision, as negotiated with the upstream session
// ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28").
type Era = string

// Capabilities are the sampling sub-capabilities the firewall advertised to
// the upstream that sent the request. A request may only use what was
// advertised.
type Capabilities struct {
	Tools   bool // sampling.tools: tools and toolChoice allowed
	Context bool // sampling.context: includeContext other than "none" allowed
	// Form and URL are the elicitation modes the firewall offered the
	// upstream (elicitation.form, elicitation.url); a request may use only
	// those.
	Form bool `json:"form,omitempty"`
	URL  bool `json:"url,omitempty"`
}

// Options is everything a check depends on besides the bytes themselves.
type Options struct {
	Era    Era
	Caps   Capabilities
	Limits Limits // zero value means DefaultLimits()
}

// Violation is one broken rule. Rule is a stable id (e.g. "SMP-06.pairing"),
// Path a JSON Pointer into the checked document (a member name longer
// than 64 bytes is cut short there and ends in "…"), Message a sentence a
// person understands.
type Violation struct {
	Rule    string `json:"rule"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Document is a parsed JSON object, as the policy sees it: objects are
// map[string]any, arrays []any, numbers json.Number.
type Document = map[string]any
