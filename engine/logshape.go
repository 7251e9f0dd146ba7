package engine

// The masked decision log writes the input document as a shape describes
// it. The rule is inverted from a list of things to hide: every value is
// upstream (or host) text and is replaced by its digest, unless its shape
// below says why it may stay. A member a shape does not name is digested
// together with its name, so a field added to the input later is masked
// until someone writes down here why it is safe to show.

// shapeKind says what the log keeps of a value.
type shapeKind uint8

const (
	// digested: the value (any JSON) is replaced by its digest. The zero
	// value, so a shape nobody described hides what it holds.
	digested shapeKind = iota
	// asIs: written unchanged. Only for what mcpx-fw built or the
	// operator configured, never for what an upstream or host sent.
	asIs
	// number: kept when a JSON number of at most maxKeptNumber characters.
	number
	// boolean: kept when true or false.
	boolean
	// oneOf: kept when one of a fixed set of words, so the upstream picks
	// among mcpx-fw's words instead of writing its own.
	oneOf
	// revision: kept when shaped like a protocol revision (a date); a date
	// carries no words.
	revision
	// object: members named in fields are written as their shapes say;
	// any other member's name and value are both digested.
	object
	// list: an array whose elements are shaped elem.
	list
	// content: MCP content, one block or (2025-11-25 on) an array of
	// blocks, each shaped elem.
	content
	// table: an object whose member names were configured by the operator
	// (usage windows), its values shaped elem.
	table
	// keyed: an object whose member names an upstream or a host wrote (a
	// form's field names): each name digested, each value shaped elem.
	keyed
)

// maxKeptNumber bounds the spelling of a number kept in clear: a number
// spelt with hundreds of digits is a message, not a count.
const maxKeptNumber = 32

// shape describes what the masked log keeps of one value of the input.
type shape struct {
	kind   shapeKind
	words  map[string]bool   // oneOf
	fields map[string]*shape // object
	elem   *shape            // list, content, table, keyed
}

// stranger is the shape of a member s does not name: its elem for a keyed
// object, else opaque.
func (s *shape) stranger() *shape {
	if s.kind == keyed {
		return s.elem
	}
	return opaque
}

// The shapes of single values.
var (
	opaque        = &shape{}
	asGiven       = &shape{kind: asIs}
	numberShape   = &shape{kind: number}
	boolShape     = &shape{kind: boolean}
	revisionShape = &shape{kind: revision}
)

func words(ws ...string) *shape {
	s := &shape{kind: oneOf, words: map[string]bool{}}
	for _, w := range ws {
		s.words[w] = true
	}
	return s
}

func members(fields map[string]*shape) *shape { return &shape{kind: object, fields: fields} }

func listOf(elem *shape) *shape { return &shape{kind: list, elem: elem} }

func keyedBy(elem *shape) *shape { return &shape{kind: keyed, elem: elem} }

// isRevision reports whether s is shaped as MCP names protocol revisions,
// a date: YYYY-MM-DD.
func isRevision(s string) bool {
	if len(s) != len("2025-11-25") {
		return false
	}
	for i := range len(s) {
		if c := s[i]; i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// The fixed vocabularies kept in clear, each checked here again: a request
// that failed validation is logged as the upstream sent it.
var (
	roleWords    = words("user", "assistant")
	blockWords   = words("text", "image", "audio", "tool_use", "tool_result", "resource", "resource_link")
	contextWords = words("none", "thisServer", "allServers")
	// mimeWords are common media types; any other (validation only checks
	// the image/ or audio/ prefix) is digested.
	mimeWords = words("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml",
		"audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm", "audio/flac",
		"text/plain", "text/markdown", "text/html", "application/json", "application/pdf", "application/octet-stream")
	// stopWords are the spec's stopReason values; stopReason is otherwise
	// an open string the host writes.
	stopWords = words("endTurn", "stopSequence", "maxTokens", "toolUse")
)

// inputShapes are the whole input document of each kind as the masked log
// writes it. Every field kept in clear says why it is safe; everything
// else is digested.
var inputShapes = map[Kind]*shape{
	KindSampling:    newInputShape(requestShape(blockShape()), resultShape(blockShape()), factsShape()),
	KindElicitation: newInputShape(elicitationShape(), elicitationResultShape(), elicitationFactsShape()),
	KindRoots:       newInputShape(rootsShape(), rootsResultShape(), rootsFactsShape()),
}

// inputShapeOf is the shape of input, by the kind it names (mcpx-fw always
// names one; a document naming none is sampling's, as a Request without a
// kind is).
func inputShapeOf(input map[string]any) *shape {
	if k, ok := input["kind"].(string); ok && inputShapes[Kind(k)] != nil {
		return inputShapes[Kind(k)]
	}
	return inputShapes[KindSampling]
}

// newInputShape is the input document with a kind's request, result and
// facts.
func newInputShape(request, result, facts *shape) *shape {
	return members(map[string]*shape{
		"version": words(InputVersion), // mcpx-fw's constant
		"kind":    words(string(KindSampling), string(KindElicitation), string(KindRoots)),
		"stage":   words(string(StageRequest), string(StageResult)),
		"server": members(map[string]*shape{
			"name":     asGiven,       // the operator's configured name
			"label":    asGiven,       // the operator's configured label
			"protocol": revisionShape, // the session's negotiated revision
			"reported": opaque,        // serverInfo as the upstream claims it
		}),
		"host": members(map[string]*shape{
			"protocol": revisionShape,
			// What the host (the operator's own client, not the party
			// under suspicion) declared it can do; mcpx-fw acts on it.
			"capabilities": asGiven,
		}),
		"origin": members(map[string]*shape{
			"method": words("", "tools/call", "prompts/get", "resources/read"), // set by the relay
			"name":   opaque,                                                   // a tool, prompt or resource the upstream named
			"round":  numberShape,
		}),
		"request": request,
		"result":  result,
		"facts":   facts,
		"usage": {kind: table, elem: members(map[string]*shape{ // window names are configured
			"requests": numberShape, "requested_tokens": numberShape, "returned_tokens": numberShape, "tokens": numberShape,
		})},
		"approval": members(map[string]*shape{
			"decision_id": asGiven, // an id mcpx-fw made
			"by":          asGiven, // the operator's account, from the OS
			"at":          asGiven, // formatted by mcpx-fw
			"edited":      boolShape,
		}),
		// Reason codes, which the decision log keeps wherever they
		// appear: the policy author's words, set by the relay from the
		// request stage's reasons.
		"approved_codes": listOf(asGiven),
		"violations":     listOf(opaque),
	})
}

// requestShape is CreateMessageRequestParams: numbers and the enums
// validation checks stay; every text, name, id and free-form object goes.
func requestShape(block *shape) *shape {
	return members(map[string]*shape{
		"messages": listOf(members(map[string]*shape{
			"role":    roleWords,
			"content": {kind: content, elem: block},
			"_meta":   opaque,
		})),
		"systemPrompt":   opaque,
		"maxTokens":      numberShape,
		"includeContext": contextWords,
		"temperature":    numberShape,
		"stopSequences":  listOf(opaque),
		"metadata":       opaque,
		"modelPreferences": members(map[string]*shape{
			"hints":                listOf(members(map[string]*shape{"name": opaque})),
			"costPriority":         numberShape,
			"speedPriority":        numberShape,
			"intelligencePriority": numberShape,
		}),
		"tools": listOf(members(map[string]*shape{
			"name": opaque, "title": opaque, "description": opaque,
			"inputSchema": opaque, "outputSchema": opaque, "annotations": opaque,
			"icons": opaque, "execution": opaque, "_meta": opaque,
		})),
		"toolChoice": members(map[string]*shape{"mode": words("auto", "required", "none")}),
		"task":       members(map[string]*shape{"ttl": numberShape}),
		"_meta":      opaque,
	})
}

// resultShape is the host's CreateMessageResult: the model's words, its
// name and a stop reason outside the spec's are digested.
func resultShape(block *shape) *shape {
	return members(map[string]*shape{
		"role":       roleWords,
		"content":    {kind: content, elem: block},
		"model":      opaque,
		"stopReason": stopWords,
		"_meta":      opaque,
	})
}

// blockShape is a content block of any type, nested resources included
// (a tool_result's content holds blocks).
func blockShape() *shape {
	block := members(nil)
	block.fields = map[string]*shape{
		"type":     blockWords,
		"text":     opaque,
		"data":     opaque,
		"mimeType": mimeWords,
		"annotations": members(map[string]*shape{
			"audience":     listOf(roleWords),
			"priority":     numberShape,
			"lastModified": opaque,
		}),
		"id":                opaque,
		"name":              opaque,
		"input":             opaque,
		"toolUseId":         opaque,
		"content":           listOf(block),
		"structuredContent": opaque,
		"isError":           boolShape,
		"uri":               opaque,
		"title":             opaque,
		"description":       opaque,
		"size":              numberShape,
		"icons":             opaque,
		"resource": members(map[string]*shape{
			"uri": opaque, "mimeType": mimeWords, "text": opaque, "blob": opaque, "_meta": opaque,
		}),
		"_meta": opaque,
	}
	return block
}

// factsShape keeps the counts and the facts drawn from mcpx-fw's own
// vocabularies; the texts and tool names are the upstream's words.
func factsShape() *shape {
	return members(map[string]*shape{
		"message_count":     numberShape,
		"text_bytes":        numberShape,
		"image_bytes":       numberShape,
		"audio_bytes":       numberShape,
		"estimated_tokens":  numberShape,
		"texts":             listOf(opaque),
		"folded_texts":      listOf(opaque),
		"hidden_text":       opaque,
		"secret_stems":      listOf(words(secretStems...)),
		"tool_names":        listOf(opaque),
		"tool_result_count": numberShape,
		"include_context":   contextWords,
		"max_tokens":        numberShape,
		"has_tools":         boolShape,
		"block_types":       listOf(blockWords),
	})
}

// maskedPaths lists, as OPA's "masked" field does, where in the event
// masking replaced values by digests: the input's upstream and host parts,
// the reasons' and violations' messages, and the error's quoted part.
var maskedPaths = []string{
	"/input/server/reported", "/input/origin/name", "/input/request", "/input/result",
	"/input/facts", "/result/reasons", "/result/violations", "/error",
}

// The vocabularies of elicitation kept in clear.
var (
	modeWords   = words("form", "url")
	fieldWords  = words("string", "number", "integer", "boolean", "array")
	formatWords = words("email", "uri", "date", "date-time")
	actionWords = words("accept", "decline", "cancel")
	// schemeWords are the schemes a URL is commonly given with; any other
	// (an upstream may write any word there) is digested.
	schemeWords = words("https", "http", "mailto", "javascript", "data", "file", "ftp", "ws", "wss")
)

// elicitationShape is ElicitRequestParams: the mode, the form's shape
// (types, formats, bounds) stay; the message, every field name, title,
// description, enum value and title, every default, the URL and its id
// go. The URL goes whole, host included: the upstream wrote all of it,
// and a host can carry data as well as any text ("<user's secret>.evil.example").
// Its facts keep what a reader of the log needs to tell URLs apart
// without reading them: scheme, port, userinfo, punycode, mixed script.
func elicitationShape() *shape {
	option := members(map[string]*shape{"const": opaque, "title": opaque})
	field := members(map[string]*shape{
		"type": fieldWords, "title": opaque, "description": opaque, "format": formatWords,
		"minLength": numberShape, "maxLength": numberShape, "minimum": numberShape, "maximum": numberShape,
		"minItems": numberShape, "maxItems": numberShape,
		"default": opaque, "enum": listOf(opaque), "enumNames": listOf(opaque),
		"oneOf": listOf(option), "anyOf": listOf(option),
		"items": members(map[string]*shape{
			"type": fieldWords, "enum": listOf(opaque), "oneOf": listOf(option), "anyOf": listOf(option),
		}),
	})
	return members(map[string]*shape{
		"mode":    modeWords,
		"message": opaque,
		"requestedSchema": members(map[string]*shape{
			"type":                 words("object"),
			"properties":           keyedBy(field),
			"required":             listOf(opaque), // field names
			"$schema":              opaque,
			"title":                opaque,
			"description":          opaque,
			"additionalProperties": boolShape,
		}),
		"task":          members(map[string]*shape{"ttl": numberShape}),
		"url":           opaque,
		"elicitationId": opaque,
		"_meta":         opaque,
	})
}

// elicitationResultShape is ElicitResult: the action stays; every answer
// is the user's, name and value.
func elicitationResultShape() *shape {
	return members(map[string]*shape{
		"action":  actionWords,
		"content": keyedBy(opaque),
		"_meta":   opaque,
	})
}

// elicitationFactsShape keeps counts, booleans and mcpx-fw's words; the
// texts, field names, titles, the URL's host in both forms and its
// registrable domain are the upstream's words, the answers the user's.
func elicitationFactsShape() *shape {
	stems := listOf(words(secretStems...))
	return members(map[string]*shape{
		"mode":          modeWords,
		"message_bytes": numberShape,
		"fields": listOf(members(map[string]*shape{
			"name": opaque, "type": fieldWords, "format": formatWords, "title": opaque, "description": opaque,
			"required": boolShape, "has_default": boolShape, "enum_count": numberShape, "multi": boolShape,
		})),
		"field_names":        listOf(opaque),
		"folded_field_names": listOf(opaque),
		"texts":              listOf(opaque),
		"folded_texts":       listOf(opaque),
		"hidden_text":        opaque,
		"secret_stems":       stems,
		"url": members(map[string]*shape{
			"scheme": schemeWords, "host": opaque, "port": numberShape, "userinfo": boolShape,
			"registrable_domain": opaque, "punycode": boolShape, "mixed_script": boolShape, "unicode_host": opaque,
		}),
		"answer_texts":        listOf(opaque),
		"answer_folded_texts": listOf(opaque),
		"answer_hidden_text":  opaque,
		"answer_secret_stems": stems,
	})
}

// rootsShape is ListRootsRequest's params, {} but for a _meta.
func rootsShape() *shape { return members(map[string]*shape{"_meta": opaque}) }

// rootsResultShape is ListRootsResult: every URI and name is the host's,
// and names the user's files.
func rootsResultShape() *shape {
	return members(map[string]*shape{
		"roots": listOf(members(map[string]*shape{"uri": opaque, "name": opaque, "_meta": opaque})),
		"_meta": opaque,
	})
}

func rootsFactsShape() *shape {
	return members(map[string]*shape{"root_count": numberShape, "root_uris": listOf(opaque)})
}
