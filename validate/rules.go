package validate

// Rule describes one rule id the package can emit. ID is stable: it appears
// in logs, in the policy input and in tests. Title is the short fixed phrase
// put on the wire (-32602 for requests) when the rule is the first
// violation. Eras names the protocol revisions the rule applies to; Source
// says where the requirement comes from.
type Rule struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Eras   string `json:"eras"`
	Source string `json:"source"`
}

// ruleID is a rule id as emitters use it. Every emitter passes one of the
// constants below, so an id that is not in the rule table cannot be written
// without a test noticing (see rules_test.go).
type ruleID string

const (
	ruleJSONSyntax    ruleID = "json.syntax"
	ruleJSONDuplicate ruleID = "json.duplicate-key"
	ruleJSONUTF8      ruleID = "json.utf8"

	ruleLimitBytes    ruleID = "limits.bytes"
	ruleLimitDepth    ruleID = "limits.depth"
	ruleLimitMessages ruleID = "limits.messages"
	ruleLimitBlocks   ruleID = "limits.blocks"
	ruleLimitText     ruleID = "limits.text"
	ruleLimitBase64   ruleID = "limits.base64"
	ruleLimitTools    ruleID = "limits.tools"

	ruleEraUnknown ruleID = "era.unknown"

	ruleMessages        ruleID = "SMP-01.messages"
	ruleMessage         ruleID = "SMP-01.message"
	ruleRole            ruleID = "SMP-02.role"
	ruleMaxTokens       ruleID = "SMP-03.max-tokens"
	ruleContentEra      ruleID = "SMP-04.content-era"
	ruleBlockType       ruleID = "SMP-04.block-type"
	ruleBlock           ruleID = "SMP-05.block"
	ruleBase64          ruleID = "SMP-05.base64"
	ruleMimeType        ruleID = "SMP-05.mime-type"
	ruleAnnotations     ruleID = "SMP-05.annotations"
	ruleToolUse         ruleID = "SMP-05.tool-use"
	ruleToolResult      ruleID = "SMP-05.tool-result"
	ruleResource        ruleID = "SMP-05.resource"
	rulePairing         ruleID = "SMP-06.pairing"
	ruleMixed           ruleID = "SMP-06.mixed"
	ruleDuplicateID     ruleID = "SMP-06.duplicate-id"
	ruleToolRole        ruleID = "SMP-06.role"
	ruleUnknownTool     ruleID = "SMP-06.unknown-tool"
	ruleToolsCapability ruleID = "SMP-07.tools-capability"
	ruleTools           ruleID = "SMP-07.tools"
	ruleToolChoice      ruleID = "SMP-07.tool-choice"
	ruleIncludeContext  ruleID = "SMP-08.include-context"
	ruleContextCap      ruleID = "SMP-08.context-capability"
	ruleModelPrefs      ruleID = "SMP-09.model-preferences"
	ruleUnknownKey      ruleID = "SMP-10.unknown-key"
	ruleSystemPrompt    ruleID = "SMP-11.system-prompt"
	ruleTemperature     ruleID = "SMP-11.temperature"
	ruleStopSequences   ruleID = "SMP-11.stop-sequences"
	ruleMetadata        ruleID = "SMP-11.metadata"
	ruleMeta            ruleID = "SMP-11.meta"
	ruleTask            ruleID = "SMP-11.task"

	ruleResultRole     ruleID = "RES-01.role"
	ruleResultModel    ruleID = "RES-02.model"
	ruleResultToolUse  ruleID = "RES-03.tool-use"
	ruleResultRequired ruleID = "RES-04.tool-required"
	ruleStopReason     ruleID = "RES-05.stop-reason"
)

// Era ranges used in the table.
const (
	erasAll   = "all"
	erasTools = "2025-11-25, 2026-07-28"
)

// ruleTable is the single list of rules. Titles are what an upstream sees;
// the two pairing titles are the spec's own phrases (S1125 §Error Handling).
var ruleTable = []Rule{
	{string(ruleJSONSyntax), "Malformed JSON", erasAll, "RFC 8259; DESIGN §3 strict parsing"},
	{string(ruleJSONDuplicate), "Duplicate key in JSON object", erasAll, "RFC 8259 §4 (names SHOULD be unique); DESIGN §3"},
	{string(ruleJSONUTF8), "Invalid UTF-8 in JSON", erasAll, "RFC 8259 §8.1"},
	{string(ruleLimitBytes), "Message too large", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitDepth), "JSON nested too deeply", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitMessages), "Too many messages", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitBlocks), "Too many content blocks", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitText), "Text content too large", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitBase64), "Binary content too large", erasAll, "DESIGN §3 size limits"},
	{string(ruleLimitTools), "Too many tools", erasTools, "DESIGN §3 size limits"},
	{string(ruleEraUnknown), "Unsupported protocol version", erasAll, "SPEC-NOTES §5 supported versions"},
	{string(ruleMessages), "messages must be a non-empty array", erasAll, "SPEC-NOTES §7 V1; schema CreateMessageRequestParams.messages"},
	{string(ruleMessage), "Invalid sampling message", erasAll, "SPEC-NOTES §1.4; schema SamplingMessage"},
	{string(ruleRole), "Invalid message role", erasAll, "SPEC-NOTES §7 V1; schema Role"},
	{string(ruleMaxTokens), "maxTokens must be a positive integer", erasAll, "SPEC-NOTES §7 V2"},
	{string(ruleContentEra), "Invalid message content", erasAll, "SPEC-NOTES §7 V4; §1.4"},
	{string(ruleBlockType), "Content type not allowed", erasAll, "SPEC-NOTES §7 V3; §1.4"},
	{string(ruleBlock), "Invalid content block", erasAll, "SPEC-NOTES §1.4 block shapes"},
	{string(ruleBase64), "Invalid base64 data", erasAll, "SPEC-NOTES §7 V10; schema ImageContent.data"},
	{string(ruleMimeType), "Invalid mimeType", erasAll, "SPEC-NOTES §7 V10; schema ImageContent.mimeType"},
	{string(ruleAnnotations), "Invalid annotations", erasAll, "schema Annotations"},
	{string(ruleToolUse), "Invalid tool_use block", erasTools, "SPEC-NOTES §7 V9; schema ToolUseContent"},
	{string(ruleToolResult), "Invalid tool_result block", erasTools, "SPEC-NOTES §1.4; schema ToolResultContent"},
	{string(ruleResource), "Invalid resource content", erasTools, "schema ResourceLink, EmbeddedResource"},
	{string(rulePairing), "Tool result missing in request", erasTools, "SPEC-NOTES §2 item 4, §7 V8; S1125 §Error Handling"},
	{string(ruleMixed), "Tool results mixed with other content", erasTools, "SPEC-NOTES §2 item 3, §7 V7; S1125 §Error Handling"},
	{string(ruleDuplicateID), "Duplicate tool use id", erasTools, "SPEC-NOTES §7 V8, V9"},
	{string(ruleToolRole), "Tool content in the wrong role", erasTools, "SPEC-NOTES §2 item 5"},
	{string(ruleUnknownTool), "Tool use names an unknown tool", erasTools, "SPEC-NOTES §7 V9, C1"},
	{string(ruleToolsCapability), "Sampling tools capability not declared", erasTools, "SPEC-NOTES §2 item 1, §7 V5"},
	{string(ruleTools), "Invalid tools", erasTools, "schema Tool"},
	{string(ruleToolChoice), "Invalid toolChoice", erasTools, "SPEC-NOTES §2 item 6, §7 V10"},
	{string(ruleIncludeContext), "Invalid includeContext", erasAll, "SPEC-NOTES §7 V6"},
	{string(ruleContextCap), "Sampling context capability not declared", erasAll, "SPEC-NOTES §2 item 2, §7 V6"},
	{string(ruleModelPrefs), "Invalid modelPreferences", erasAll, "SPEC-NOTES §1.5, §7 V10"},
	{string(ruleUnknownKey), "Unknown field", erasAll, "DESIGN §3 strict types; SPEC-NOTES §1.2"},
	{string(ruleSystemPrompt), "systemPrompt must be a string", erasAll, "SPEC-NOTES §1.2"},
	{string(ruleTemperature), "temperature must be a number", erasAll, "SPEC-NOTES §1.2"},
	{string(ruleStopSequences), "stopSequences must be an array of strings", erasAll, "SPEC-NOTES §1.2"},
	{string(ruleMetadata), "metadata must be an object", erasAll, "SPEC-NOTES §1.2"},
	{string(ruleMeta), "_meta must be an object", erasAll, "schema RequestParams._meta, MetaObject"},
	{string(ruleTask), "Invalid task", "2025-11-25", "SPEC-NOTES §1.2; schema TaskMetadata"},
	{string(ruleResultRole), "Completion role must be assistant", erasAll, "SPEC-NOTES §7 C1"},
	{string(ruleResultModel), "Completion model must be a non-empty string", erasAll, "SPEC-NOTES §7 C1"},
	{string(ruleResultToolUse), "Tool use not allowed by the request", erasTools, "SPEC-NOTES §2 item 6, §7 C1"},
	{string(ruleResultRequired), "Tool use required by the request", erasTools, "SPEC-NOTES §2 item 6, §7 C1"},
	{string(ruleStopReason), "Invalid stopReason", erasAll, "SPEC-NOTES §1.3, §7 C2"},
}

// ruleIndex finds a rule by id; built once from ruleTable.
var ruleIndex = func() map[string]Rule {
	m := make(map[string]Rule, len(ruleTable))
	for _, r := range ruleTable {
		m[r.ID] = r
	}
	return m
}()

// defaultTitle is the wire message for a rule the table does not know, so
// that an unexpected id still yields a plain, fixed phrase.
const defaultTitle = "Invalid sampling request"

// Title returns the short fixed English phrase for rule, used as the
// JSON-RPC error message when rule is the first violation. It never echoes
// anything the upstream sent.
func Title(rule string) string {
	if r, ok := ruleIndex[rule]; ok {
		return r.Title
	}
	return defaultTitle
}

// Rules lists every rule id the package can emit, in a stable order. The
// slice is a copy: callers may keep or change it.
func Rules() []Rule {
	return append([]Rule(nil), ruleTable...)
}

// listed reports whether id is in the rule table.
func listed(id ruleID) bool {
	_, ok := ruleIndex[string(id)]
	return ok
}
