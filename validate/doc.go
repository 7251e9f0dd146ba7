// Package validate owns the structural validation of MCP sampling traffic:
// the params of a sampling/createMessage request sent by an upstream server,
// and the CreateMessageResult the host returns for it.
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
// Wire codes (DESIGN §2 wire mapping, relay/codes.go): a request violation
// answers a legacy upstream with -32602 and the title as message; a
// violation in the host's completion answers with -32603 and the message
// "host returned an invalid completion: <title>". When the request came
// inside a host's tools/call (2026-07-28) and that call cannot finish, the
// call gets the same code.
//
// In sources, S1125 and S0728 are the sampling pages of 2025-11-25 and
// 2026-07-28; "schema X" is the type X in every revision and
// "schema-<rev> X" the type as revision <rev> defines it; V1-V11 and C1-C3
// are the checks of SPEC-NOTES §7. TestDocListsEveryRule keeps this table
// equal to Rules().
//
//	json.syntax  "Malformed JSON"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §2, §6 (numbers a float64 holds); DESIGN §3 strict parsing
//	json.duplicate-key  "Duplicate key in JSON object"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §4 (names SHOULD be unique); DESIGN §3 duplicate keys rejected
//	json.utf8  "Invalid UTF-8 in JSON"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: RFC 8259 §8.1; DESIGN §3 strict parsing
//	limits.bytes  "Message too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 size limits (bytes)
//	limits.depth  "JSON nested too deeply"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 size limits (depth)
//	limits.messages  "Too many messages"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: DESIGN §3 messages 1..limit
//	limits.blocks  "Too many content blocks"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 size limits (blocks)
//	limits.text  "Text content too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 size limits; V10
//	limits.base64  "Binary content too large"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 size limits; V10
//	limits.tools  "Too many tools"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32602 (request)
//	    source: DESIGN §3 size limits; schema-2025-11-25 CreateMessageRequestParams.tools
//	era.unknown  "Unsupported protocol version"
//	    eras:   unsupported
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 era is the upstream session's protocol; SPEC-NOTES §5
//	SMP-01.messages  "messages must be a non-empty array"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema CreateMessageRequestParams.messages; DESIGN §3; V1
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
//	    source: schema-2025-11-25 ToolUseContent.name; DESIGN §3 tool pairing; V9, C1
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
//	    source: schema-2025-11-25 ClientCapabilities.sampling.context; DESIGN §3; V6
//	SMP-09.model-preferences  "Invalid modelPreferences"
//	    eras:   all
//	    wire:   -32602 (request)
//	    source: schema ModelPreferences, ModelHint; V10
//	SMP-10.unknown-key  "Unknown field"
//	    eras:   all
//	    wire:   -32602 (request), -32603 (result)
//	    source: DESIGN §3 unknown keys rejected; the schema of the era
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
//	    source: schema CreateMessageResult.model; DESIGN §3 result rules; C1
//	RES-03.tool-use  "Tool use not allowed by the request"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32603 (result)
//	    source: S1125 §Tool Choice Modes (none); DESIGN §3 result rules; C1
//	RES-04.tool-required  "Tool use required by the request"
//	    eras:   2025-11-25, 2026-07-28
//	    wire:   -32603 (result)
//	    source: S1125 §Tool Choice Modes (required); DESIGN §3 result rules; C1
//	RES-05.stop-reason  "Invalid stopReason"
//	    eras:   all
//	    wire:   -32603 (result)
//	    source: schema-2025-11-25 CreateMessageResult.stopReason; DESIGN §3 result rules; C2
package validate
