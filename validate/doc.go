// Package validate owns the structural validation of what an MCP upstream
// server asks of the host and of what the host answers: the params of a
// sampling/createMessage request and the CreateMessageResult (Request,
// Result), of an elicitation/create request and the ElicitResult
// (Elicitation, ElicitationResult), of a roots/list request and the
// ListRootsResult (Roots, RootsResult). Each kind has its own rule ids
// (SMP- and RES- for sampling, ELI- for elicitation, RTS- for roots); the
// json., limits. and era. rules are shared.
//
// Validation is pure: a function of the bytes, the protocol era of the
// upstream session and the capabilities the firewall advertised to it. It
// parses with its own strict reader (case-sensitive keys, unknown and
// duplicate keys rejected, invalid UTF-8, numbers no float64 holds, depth
// and size caps), collects every violation in document order under a
// stable rule id, and returns the parsed document so that policy judges
// exactly what will be forwarded.
//
// Caps on what is allowed (token budgets, MIME allow-lists, who may use
// tools) are policy and live in engine/ and the Rego; this package only says
// whether the message is well formed for its era.
//
// validate imports only the standard library. It does no I/O, keeps no
// state between calls and must not import engine, relay, cmd or the MCP SDK.
//
// # Rules
//
// Every rule id the package emits, as [Rules] returns them, with its title
// (the fixed phrase on the wire), the protocol revisions it applies in
// ("all" is 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28;
// "unsupported" is any other version), the JSON-RPC error an upstream
// receives when the rule is the first violation, and where the requirement
// comes from.
//
// Wire codes (relay/internal/refusal maps verdicts to them): a request violation
// answers a legacy upstream with -32602 and the title as message; a
// violation in the host's completion answers with -32603 and the message
// "host returned an invalid completion: <title>" (for an elicitation
// result, "host returned an invalid elicitation result"; a roots result
// that breaks a rule is refused with -32603 too). When the request came
// inside a host's tools/call (2026-07-28) and that call cannot finish, the
// call gets the same code.
//
// In sources, S1125 and S0728 are the sampling pages of 2025-11-25 and
// 2026-07-28, E1125 the elicitation page of 2025-11-25; "schema X" is the type X in every revision and
// "schema-<rev> X" the type as revision <rev> defines it. V1-V10 and C1-C2
// name the checks the spec's sampling pages call for, one rule or more
// each:
//
//   - V1: messages an array; every role user or assistant
//   - V2: maxTokens a positive integer
//   - V3: block types the era allows
//   - V4: one block per message before 2025-11-25
//   - V5: tools and toolChoice only when sampling.tools was declared
//   - V6: includeContext a known value, other than none only when declared
//   - V7: a user message holding tool results holds nothing else
//   - V8: every tool use answered by the next message, id for id
//   - V9: tool use input an object, ids unique, names among the tools offered
//   - V10: toolChoice modes, priorities, base64, MIME types and sizes
//   - C1: a completion: role assistant, a model, content its request allows
//   - C2: stopReason toolUse exactly when the content holds tool_use
//
// TestDocListsEveryRule keeps this table equal to Rules().
//
//	json.syntax  "Malformed JSON"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §2, §6 (numbers a float64 holds); strict parsing
//	json.duplicate-key  "Duplicate key in JSON object"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §4 (names SHOULD be unique); duplicate keys rejected
//	json.utf8  "Invalid UTF-8 in JSON"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §8.1; strict parsing
//	limits.bytes  "Message too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_bytes
//	limits.depth  "JSON nested too deeply"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_depth
//	limits.messages  "Too many messages"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: messages 1..limits.max_messages
//	limits.blocks  "Too many content blocks"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_blocks
//	limits.text  "Text content too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_text_bytes; V10
//	limits.base64  "Binary content too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_base64_bytes; V10
//	limits.tools  "Too many tools"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: size limit limits.max_tools; schema-2025-11-25 CreateMessageRequestParams.tools
//	limits.fields  "Too many form fields"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: size limit limits.max_fields; schema-2025-11-25 ElicitRequestFormParams.requestedSchema.properties
//	limits.enum  "Too many options in a form field"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: size limit limits.max_enum_values; schema-2025-11-25 EnumSchema
//	limits.label  "Name or label too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: size limit limits.max_label_bytes; schema-2025-11-25 PrimitiveSchemaDefinition, ElicitRequestURLParams.elicitationId, Root.name
//	limits.url  "URL too large"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: size limit limits.max_url_bytes; schema-2025-11-25 ElicitRequestURLParams.url
//	limits.roots  "Too many roots"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: size limit limits.max_roots; schema ListRootsResult.roots
//	era.unknown  "Unsupported protocol version"
//	    eras:   unsupported
//	    wire:   -32602 (request), -32603 (result)
//	    source: the era is the upstream session's protocol; the eras the firewall speaks
//	SMP-01.messages  "messages must be a non-empty array"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.messages; V1
//	SMP-01.message  "Invalid sampling message"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema SamplingMessage
//	SMP-02.role  "Invalid message role"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema Role; S0728 §Messages; V1
//	SMP-03.max-tokens  "maxTokens must be a positive integer"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.maxTokens; S0728 §Sampling Parameters; V2
//	SMP-04.content-era  "Invalid message content"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2024-11-05 SamplingMessage (one block); schema-2025-11-25 SamplingMessage (block or array); V4
//	SMP-04.block-type  "Content type not allowed"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2024-11-05, schema-2025-03-26 SamplingMessage; schema-2025-11-25 SamplingMessageContentBlock, ContentBlock; V3
//	SMP-05.block  "Invalid content block"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema TextContent, ImageContent, AudioContent
//	SMP-05.base64  "Invalid base64 data"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema ImageContent.data, AudioContent.data (@format byte); V10
//	SMP-05.mime-type  "Invalid mimeType"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema ImageContent.mimeType, AudioContent.mimeType; V10
//	SMP-05.annotations  "Invalid annotations"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2024-11-05 Annotated; schema-2025-03-26 Annotations
//	SMP-05.tool-use  "Invalid tool_use block"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2025-11-25 ToolUseContent; V9
//	SMP-05.tool-result  "Invalid tool_result block"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ToolResultContent; schema-2026-07-28 ToolResultContent.structuredContent
//	SMP-05.resource  "Invalid resource content"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ResourceLink, EmbeddedResource, TextResourceContents, BlobResourceContents
//	SMP-06.pairing  "Tool result missing in request"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: S1125 §Message Content Constraints; S1125 §Error Handling; V8
//	SMP-06.mixed  "Tool results mixed with other content"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: S1125 §Message Content Constraints; S1125 §Error Handling; V7
//	SMP-06.duplicate-id  "Duplicate tool use id"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2025-11-25 ToolUseContent.id, ToolResultContent.toolUseId; V8, V9
//	SMP-06.role  "Tool content in the wrong role"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: S1125 §Message Roles
//	SMP-06.unknown-tool  "Tool use names an unknown tool"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema-2025-11-25 ToolUseContent.name; tool_use names a tool the request offers; V9, C1
//	SMP-07.tools-capability  "Sampling tools capability not declared"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: S1125 §Tools in Sampling; schema-2025-11-25 CreateMessageRequestParams.tools, .toolChoice; V5
//	SMP-07.tools  "Invalid tools"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 Tool
//	SMP-07.tool-choice  "Invalid toolChoice"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ToolChoice; S1125 §Tool Choice Modes; V10
//	SMP-08.include-context  "Invalid includeContext"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.includeContext; V6
//	SMP-08.context-capability  "Sampling context capability not declared"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ClientCapabilities.sampling.context; V6
//	SMP-09.model-preferences  "Invalid modelPreferences"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema ModelPreferences, ModelHint; V10
//	SMP-10.unknown-key  "Unknown field"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: unknown keys rejected; the schema of the era
//	SMP-11.system-prompt  "systemPrompt must be a string"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.systemPrompt
//	SMP-11.temperature  "temperature must be a number"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.temperature
//	SMP-11.stop-sequences  "stopSequences must be an array of strings"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.stopSequences
//	SMP-11.metadata  "metadata must be an object"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.metadata
//	SMP-11.meta  "_meta must be an object"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema Request.params._meta, Result._meta; schema-2025-06-18 TextContent._meta; schema-2025-11-25 MetaObject
//	SMP-11.task  "Invalid task"
//	    eras:   2025-11-25
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 TaskAugmentedRequestParams.task, TaskMetadata
//	RES-01.role  "Completion role must be assistant"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema CreateMessageResult; S1125 §Message Roles; C1
//	RES-02.model  "Completion model must be a non-empty string"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema CreateMessageResult.model; never filled in for the answerer; C1
//	RES-03.tool-use  "Tool use not allowed by the request"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32603 (result)
//	    source: S1125 §Tool Choice Modes (none); the result checked against its request; C1
//	RES-04.tool-required  "Tool use required by the request"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32603 (result)
//	    source: S1125 §Tool Choice Modes (required); the result checked against its request; C1
//	RES-05.stop-reason  "Invalid stopReason"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema-2025-11-25 CreateMessageResult.stopReason; toolUse exactly when the content holds tool_use; C2
//	ELI-01.message  "Elicitation message must be a non-empty string"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-06-18 ElicitRequest.params.message; schema-2025-11-25 ElicitRequestFormParams.message, ElicitRequestURLParams.message
//	ELI-02.mode  "Invalid elicitation mode"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ElicitRequestFormParams.mode, ElicitRequestURLParams.mode (URL mode from 2025-11-25); E1125 §Elicitation Modes
//	ELI-03.mode-capability  "Elicitation mode not declared"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ClientCapabilities.elicitation; E1125 §Capabilities (no mode declared: form only); schema-2026-07-28 InvalidParamsError
//	ELI-04.schema  "Invalid requestedSchema"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-06-18 ElicitRequest.params.requestedSchema; schema-2025-11-25 ElicitRequestFormParams.requestedSchema
//	ELI-05.field  "Form field must be a flat primitive"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 PrimitiveSchemaDefinition (only top-level properties, without nesting)
//	ELI-06.constraint  "Invalid form field constraint"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 StringSchema, NumberSchema, MultiSelectEnumSchema
//	ELI-07.enum  "Invalid form field options"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 EnumSchema (SEP-1330), LegacyTitledEnumSchema
//	ELI-08.default  "Form field default does not fit the field"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 PrimitiveSchemaDefinition.default (SEP-1034)
//	ELI-09.url  "Invalid elicitation URL"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ElicitRequestURLParams.url (@format uri); E1125 §URL Mode Elicitation Requests, §Safe URL Handling
//	ELI-10.elicitation-id  "Invalid elicitationId"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 ElicitRequestURLParams.elicitationId (required; 2026-07-28 has none)
//	ELI-11.unknown-key  "Unknown field in elicitation"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: unknown keys rejected; the elicitation schema of the era
//	ELI-12.meta  "Elicitation _meta must be an object"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema Request.params._meta, Result._meta
//	ELI-13.task  "Invalid elicitation task"
//	    eras:   2025-11-25
//	    wire:   -32602 (request)
//	    source: schema-2025-11-25 TaskAugmentedRequestParams.task, TaskMetadata
//	ELI-20.action  "Invalid elicitation action"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.action
//	ELI-21.content  "Elicitation content not allowed"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema-2025-11-25 ElicitResult.content (only with accept, in form mode)
//	ELI-22.unknown-field  "Answer has a field the form did not ask for"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.content; E1125 §Response Actions (clients SHOULD validate against the schema)
//	ELI-23.required  "Answer lacks a required field"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.content; requestedSchema.required
//	ELI-24.type  "Answer field has the wrong type"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.content; PrimitiveSchemaDefinition.type
//	ELI-25.constraint  "Answer field breaks a constraint"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.content; StringSchema, NumberSchema, MultiSelectEnumSchema
//	ELI-26.enum  "Answer field is not one of the options"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ElicitResult.content; EnumSchema
//	RTS-01.unknown-key  "Unknown field in roots"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: unknown keys rejected; schema ListRootsRequest.params, ListRootsResult, Root
//	RTS-02.meta  "Roots _meta must be an object"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: schema Request.params._meta, Result._meta, Root._meta
//	RTS-03.roots  "roots must be an array"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ListRootsResult.roots
//	RTS-04.root  "Invalid root"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema Root
//	RTS-05.uri  "Root URI must be an absolute file:// URI"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema Root.uri (must start with file://, @format uri)
//	RTS-06.name  "Root name must be a string"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema Root.name
//	RTS-07.duplicate  "Root listed twice"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema ListRootsResult.roots; one URI, one root
package validate
