package validate

// Rule describes one rule id the package can emit. ID is stable: it appears
// in logs, in the policy input and in tests. Title is the short fixed phrase
// put on the wire when the rule is the first violation. Eras names the
// protocol revisions the rule applies to: "all", a comma-separated list of
// revisions, or "unsupported" for a version this package does not know.
// Stages says which check emits it: "request" (Request), "result"
// (Result) or "request, result". Source says where the requirement comes
// from. doc.go lists the same table, and a test keeps the two equal.
type Rule struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Eras   string `json:"eras"`
	Stages string `json:"stages"`
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
	ruleLimitFields   ruleID = "limits.fields"
	ruleLimitEnum     ruleID = "limits.enum"
	ruleLimitLabel    ruleID = "limits.label"
	ruleLimitURL      ruleID = "limits.url"
	ruleLimitRoots    ruleID = "limits.roots"

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

	ruleEliMessage     ruleID = "ELI-01.message"
	ruleEliMode        ruleID = "ELI-02.mode"
	ruleEliModeCap     ruleID = "ELI-03.mode-capability"
	ruleEliSchema      ruleID = "ELI-04.schema"
	ruleEliField       ruleID = "ELI-05.field"
	ruleEliConstraint  ruleID = "ELI-06.constraint"
	ruleEliEnum        ruleID = "ELI-07.enum"
	ruleEliDefault     ruleID = "ELI-08.default"
	ruleEliURL         ruleID = "ELI-09.url"
	ruleEliID          ruleID = "ELI-10.elicitation-id"
	ruleEliUnknownKey  ruleID = "ELI-11.unknown-key"
	ruleEliMeta        ruleID = "ELI-12.meta"
	ruleEliTask        ruleID = "ELI-13.task"
	ruleEliAction      ruleID = "ELI-20.action"
	ruleEliContent     ruleID = "ELI-21.content"
	ruleEliExtraField  ruleID = "ELI-22.unknown-field"
	ruleEliRequired    ruleID = "ELI-23.required"
	ruleEliType        ruleID = "ELI-24.type"
	ruleEliValue       ruleID = "ELI-25.constraint"
	ruleEliOption      ruleID = "ELI-26.enum"
	ruleRootsUnknown   ruleID = "RTS-01.unknown-key"
	ruleRootsMeta      ruleID = "RTS-02.meta"
	ruleRootsList      ruleID = "RTS-03.roots"
	ruleRoot           ruleID = "RTS-04.root"
	ruleRootURI        ruleID = "RTS-05.uri"
	ruleRootName       ruleID = "RTS-06.name"
	ruleRootsDuplicate ruleID = "RTS-07.duplicate"
)

// Era ranges used in the table.
const (
	erasAll     = "all"
	erasTools   = "2025-11-25, 2026-07-28"
	erasTask    = "2025-11-25"
	erasURL     = "2025-11-25, 2026-07-28"
	erasUnknown = "unsupported"
)

// Stages used in the table.
const (
	stReq  = "request"
	stRes  = "result"
	stBoth = "request, result"
)

// ruleTable is the single list of rules. Titles are what an upstream sees;
// the two pairing titles are the spec's own phrases (S1125 §Error Handling).
// In sources, S1125 and S0728 are the sampling pages of 2025-11-25 and
// 2026-07-28; "schema X" is the type X in every revision, "schema-<rev> X"
// the type as revision <rev> defines it; V1-V10 and C1-C2 are the checks
// listed in doc.go.
var ruleTable = []Rule{
	{string(ruleJSONSyntax), "Malformed JSON", erasAll, stBoth, "RFC 8259 §2, §6 (numbers a float64 holds); strict parsing"},
	{string(ruleJSONDuplicate), "Duplicate key in JSON object", erasAll, stBoth, "RFC 8259 §4 (names SHOULD be unique); duplicate keys rejected"},
	{string(ruleJSONUTF8), "Invalid UTF-8 in JSON", erasAll, stBoth, "RFC 8259 §8.1; strict parsing"},
	{string(ruleLimitBytes), "Message too large", erasAll, stBoth, "size limit limits.max_bytes"},
	{string(ruleLimitDepth), "JSON nested too deeply", erasAll, stBoth, "size limit limits.max_depth"},
	{string(ruleLimitMessages), "Too many messages", erasAll, stReq, "messages 1..limits.max_messages"},
	{string(ruleLimitBlocks), "Too many content blocks", erasAll, stBoth, "size limit limits.max_blocks"},
	{string(ruleLimitText), "Text content too large", erasAll, stBoth, "size limit limits.max_text_bytes; V10"},
	{string(ruleLimitBase64), "Binary content too large", erasAll, stBoth, "size limit limits.max_base64_bytes; V10"},
	{string(ruleLimitTools), "Too many tools", erasTools, stReq, "size limit limits.max_tools; schema-2025-11-25 CreateMessageRequestParams.tools"},
	{string(ruleLimitFields), "Too many form fields", erasAll, stReq, "size limit limits.max_fields; schema-2025-11-25 ElicitRequestFormParams.requestedSchema.properties"},
	{string(ruleLimitEnum), "Too many options in a form field", erasAll, stReq, "size limit limits.max_enum_values; schema-2025-11-25 EnumSchema"},
	{string(ruleLimitLabel), "Name or label too large", erasAll, stBoth, "size limit limits.max_label_bytes; schema-2025-11-25 PrimitiveSchemaDefinition, ElicitRequestURLParams.elicitationId, Root.name"},
	{string(ruleLimitURL), "URL too large", erasURL, stReq, "size limit limits.max_url_bytes; schema-2025-11-25 ElicitRequestURLParams.url"},
	{string(ruleLimitRoots), "Too many roots", erasAll, stRes, "size limit limits.max_roots; schema ListRootsResult.roots"},
	{string(ruleEraUnknown), "Unsupported protocol version", erasUnknown, stBoth, "the era is the upstream session's protocol; the eras the firewall speaks"},
	{string(ruleMessages), "messages must be a non-empty array", erasAll, stReq, "schema CreateMessageRequestParams.messages; V1"},
	{string(ruleMessage), "Invalid sampling message", erasAll, stReq, "schema SamplingMessage"},
	{string(ruleRole), "Invalid message role", erasAll, stReq, "schema Role; S0728 §Messages; V1"},
	{string(ruleMaxTokens), "maxTokens must be a positive integer", erasAll, stReq, "schema CreateMessageRequestParams.maxTokens; S0728 §Sampling Parameters; V2"},
	{string(ruleContentEra), "Invalid message content", erasAll, stBoth, "schema-2024-11-05 SamplingMessage (one block); schema-2025-11-25 SamplingMessage (block or array); V4"},
	{string(ruleBlockType), "Content type not allowed", erasAll, stBoth, "schema-2024-11-05, schema-2025-03-26 SamplingMessage; schema-2025-11-25 SamplingMessageContentBlock, ContentBlock; V3"},
	{string(ruleBlock), "Invalid content block", erasAll, stBoth, "schema TextContent, ImageContent, AudioContent"},
	{string(ruleBase64), "Invalid base64 data", erasAll, stBoth, "schema ImageContent.data, AudioContent.data (@format byte); V10"},
	{string(ruleMimeType), "Invalid mimeType", erasAll, stBoth, "schema ImageContent.mimeType, AudioContent.mimeType; V10"},
	{string(ruleAnnotations), "Invalid annotations", erasAll, stBoth, "schema-2024-11-05 Annotated; schema-2025-03-26 Annotations"},
	{string(ruleToolUse), "Invalid tool_use block", erasTools, stBoth, "schema-2025-11-25 ToolUseContent; V9"},
	{string(ruleToolResult), "Invalid tool_result block", erasTools, stReq, "schema-2025-11-25 ToolResultContent; schema-2026-07-28 ToolResultContent.structuredContent"},
	{string(ruleResource), "Invalid resource content", erasTools, stReq, "schema-2025-11-25 ResourceLink, EmbeddedResource, TextResourceContents, BlobResourceContents"},
	{string(rulePairing), "Tool result missing in request", erasTools, stReq, "S1125 §Message Content Constraints; S1125 §Error Handling; V8"},
	{string(ruleMixed), "Tool results mixed with other content", erasTools, stReq, "S1125 §Message Content Constraints; S1125 §Error Handling; V7"},
	{string(ruleDuplicateID), "Duplicate tool use id", erasTools, stBoth, "schema-2025-11-25 ToolUseContent.id, ToolResultContent.toolUseId; V8, V9"},
	{string(ruleToolRole), "Tool content in the wrong role", erasTools, stReq, "S1125 §Message Roles"},
	{string(ruleUnknownTool), "Tool use names an unknown tool", erasTools, stBoth, "schema-2025-11-25 ToolUseContent.name; tool_use names a tool the request offers; V9, C1"},
	{string(ruleToolsCapability), "Sampling tools capability not declared", erasTools, stReq, "S1125 §Tools in Sampling; schema-2025-11-25 CreateMessageRequestParams.tools, .toolChoice; V5"},
	{string(ruleTools), "Invalid tools", erasTools, stReq, "schema-2025-11-25 Tool"},
	{string(ruleToolChoice), "Invalid toolChoice", erasTools, stReq, "schema-2025-11-25 ToolChoice; S1125 §Tool Choice Modes; V10"},
	{string(ruleIncludeContext), "Invalid includeContext", erasAll, stReq, "schema CreateMessageRequestParams.includeContext; V6"},
	{string(ruleContextCap), "Sampling context capability not declared", erasAll, stReq, "schema-2025-11-25 ClientCapabilities.sampling.context; V6"},
	{string(ruleModelPrefs), "Invalid modelPreferences", erasAll, stReq, "schema ModelPreferences, ModelHint; V10"},
	{string(ruleUnknownKey), "Unknown field", erasAll, stBoth, "unknown keys rejected; the schema of the era"},
	{string(ruleSystemPrompt), "systemPrompt must be a string", erasAll, stReq, "schema CreateMessageRequestParams.systemPrompt"},
	{string(ruleTemperature), "temperature must be a number", erasAll, stReq, "schema CreateMessageRequestParams.temperature"},
	{string(ruleStopSequences), "stopSequences must be an array of strings", erasAll, stReq, "schema CreateMessageRequestParams.stopSequences"},
	{string(ruleMetadata), "metadata must be an object", erasAll, stReq, "schema CreateMessageRequestParams.metadata"},
	{string(ruleMeta), "_meta must be an object", erasAll, stBoth, "schema Request.params._meta, Result._meta; schema-2025-06-18 TextContent._meta; schema-2025-11-25 MetaObject"},
	{string(ruleTask), "Invalid task", erasTask, stReq, "schema-2025-11-25 TaskAugmentedRequestParams.task, TaskMetadata"},
	{string(ruleResultRole), "Completion role must be assistant", erasAll, stRes, "schema CreateMessageResult; S1125 §Message Roles; C1"},
	{string(ruleResultModel), "Completion model must be a non-empty string", erasAll, stRes, "schema CreateMessageResult.model; never filled in for the answerer; C1"},
	{string(ruleResultToolUse), "Tool use not allowed by the request", erasTools, stRes, "S1125 §Tool Choice Modes (none); the result checked against its request; C1"},
	{string(ruleResultRequired), "Tool use required by the request", erasTools, stRes, "S1125 §Tool Choice Modes (required); the result checked against its request; C1"},
	{string(ruleStopReason), "Invalid stopReason", erasAll, stRes, "schema-2025-11-25 CreateMessageResult.stopReason; toolUse exactly when the content holds tool_use; C2"},
	{string(ruleEliMessage), "Elicitation message must be a non-empty string", erasAll, stReq, "schema-2025-06-18 ElicitRequest.params.message; schema-2025-11-25 ElicitRequestFormParams.message, ElicitRequestURLParams.message"},
	{string(ruleEliMode), "Invalid elicitation mode", erasAll, stReq, "schema-2025-11-25 ElicitRequestFormParams.mode, ElicitRequestURLParams.mode (URL mode from 2025-11-25); E1125 §Elicitation Modes"},
	{string(ruleEliModeCap), "Elicitation mode not declared", erasAll, stReq, "schema-2025-11-25 ClientCapabilities.elicitation; E1125 §Capabilities (no mode declared: form only); schema-2026-07-28 InvalidParamsError"},
	{string(ruleEliSchema), "Invalid requestedSchema", erasAll, stReq, "schema-2025-06-18 ElicitRequest.params.requestedSchema; schema-2025-11-25 ElicitRequestFormParams.requestedSchema"},
	{string(ruleEliField), "Form field must be a flat primitive", erasAll, stReq, "schema-2025-11-25 PrimitiveSchemaDefinition (only top-level properties, without nesting)"},
	{string(ruleEliConstraint), "Invalid form field constraint", erasAll, stReq, "schema-2025-11-25 StringSchema, NumberSchema, MultiSelectEnumSchema"},
	{string(ruleEliEnum), "Invalid form field options", erasAll, stReq, "schema-2025-11-25 EnumSchema (SEP-1330), LegacyTitledEnumSchema"},
	{string(ruleEliDefault), "Form field default does not fit the field", erasAll, stReq, "schema-2025-11-25 PrimitiveSchemaDefinition.default (SEP-1034)"},
	{string(ruleEliURL), "Invalid elicitation URL", erasURL, stReq, "schema-2025-11-25 ElicitRequestURLParams.url (@format uri); E1125 §URL Mode Elicitation Requests, §Safe URL Handling"},
	{string(ruleEliID), "Invalid elicitationId", erasURL, stReq, "schema-2025-11-25 ElicitRequestURLParams.elicitationId (required; 2026-07-28 has none)"},
	{string(ruleEliUnknownKey), "Unknown field in elicitation", erasAll, stBoth, "unknown keys rejected; the elicitation schema of the era"},
	{string(ruleEliMeta), "Elicitation _meta must be an object", erasAll, stBoth, "schema Request.params._meta, Result._meta"},
	{string(ruleEliTask), "Invalid elicitation task", erasTask, stReq, "schema-2025-11-25 TaskAugmentedRequestParams.task, TaskMetadata"},
	{string(ruleEliAction), "Invalid elicitation action", erasAll, stRes, "schema ElicitResult.action"},
	{string(ruleEliContent), "Elicitation content not allowed", erasAll, stRes, "schema-2025-11-25 ElicitResult.content (only with accept, in form mode)"},
	{string(ruleEliExtraField), "Answer has a field the form did not ask for", erasAll, stRes, "schema ElicitResult.content; E1125 §Response Actions (clients SHOULD validate against the schema)"},
	{string(ruleEliRequired), "Answer lacks a required field", erasAll, stRes, "schema ElicitResult.content; requestedSchema.required"},
	{string(ruleEliType), "Answer field has the wrong type", erasAll, stRes, "schema ElicitResult.content; PrimitiveSchemaDefinition.type"},
	{string(ruleEliValue), "Answer field breaks a constraint", erasAll, stRes, "schema ElicitResult.content; StringSchema, NumberSchema, MultiSelectEnumSchema"},
	{string(ruleEliOption), "Answer field is not one of the options", erasAll, stRes, "schema ElicitResult.content; EnumSchema"},
	{string(ruleRootsUnknown), "Unknown field in roots", erasAll, stBoth, "unknown keys rejected; schema ListRootsRequest.params, ListRootsResult, Root"},
	{string(ruleRootsMeta), "Roots _meta must be an object", erasAll, stBoth, "schema Request.params._meta, Result._meta, Root._meta"},
	{string(ruleRootsList), "roots must be an array", erasAll, stRes, "schema ListRootsResult.roots"},
	{string(ruleRoot), "Invalid root", erasAll, stRes, "schema Root"},
	{string(ruleRootURI), "Root URI must be an absolute file:// URI", erasAll, stRes, "schema Root.uri (must start with file://, @format uri)"},
	{string(ruleRootName), "Root name must be a string", erasAll, stRes, "schema Root.name"},
	{string(ruleRootsDuplicate), "Root listed twice", erasAll, stRes, "schema ListRootsResult.roots; one URI, one root"},
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
