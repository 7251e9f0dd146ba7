package engine

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/validate"
)

// factsOf derives what policies most often need from the validated
// documents of a request of kind k (and, at the result stage, its result),
// so rules stay short and every policy counts the same way. Each kind has
// facts of its own (facts_elicitation.go, facts_roots.go).
func factsOf(k Kind, req, res map[string]any) map[string]any {
	switch k {
	case KindElicitation:
		return elicitationFacts(req, res)
	case KindRoots:
		return rootsFacts(res)
	}
	return samplingFacts(req)
}

// Facts is input.facts for a request of kind k and its result (nil
// before there is one), exactly as the policy reads them. The operator's
// tools show some of them beside a stored request (estimated_tokens,
// max_tokens), so what a reviewer reads is counted by the rule the policy
// decided on, not by an estimate of their own.
func Facts(k Kind, request, result validate.Document) map[string]any {
	return factsOf(k, request, result)
}

// samplingFacts are a sampling request's facts: counts, sizes, texts and
// tools.
func samplingFacts(req map[string]any) map[string]any {
	f := facts{types: map[string]bool{}}
	if req == nil {
		return f.document(nil)
	}
	msgs, _ := req["messages"].([]any)
	f.texts = make([]any, 0, len(msgs)+1)
	if sp, ok := req["systemPrompt"].(string); ok && sp != "" {
		f.addText(req["systemPrompt"])
		f.tokens.text(sp)
	}
	for _, m := range msgs {
		if msg, ok := m.(map[string]any); ok {
			for _, b := range blocksOf(msg["content"]) {
				f.addBlock(b)
			}
		}
	}
	f.messages = len(msgs)
	f.tokens.json(req["tools"])
	return f.document(req)
}

// facts accumulates what factsOf reports.
type facts struct {
	messages, textBytes, imageBytes, audioBytes, toolResults int
	texts                                                    []any
	types                                                    map[string]bool
	// tokens is the prompt as the model reads it: the texts, and what
	// the model reads besides (media, tool calls and definitions).
	tokens tokenCount
}

// addText counts a text and lists it ("" for a text that is not a string).
// It takes the text as the document holds it, already boxed in an
// interface, so listing it allocates nothing.
func (f *facts) addText(text any) {
	s, ok := text.(string)
	if !ok {
		text = ""
	}
	f.textBytes += len(s)
	f.texts = append(f.texts, text)
}

// addBlock counts a message's content block: its texts are listed (a
// tool result's too), and everything in it the model reads is estimated.
func (f *facts) addBlock(b map[string]any) {
	kind, _ := b["type"].(string)
	f.types[kind] = true
	f.tokens.block(b)
	switch kind {
	case "text":
		f.addText(b["text"])
	case "image":
		f.imageBytes += decodedLen(b["data"])
	case "audio":
		f.audioBytes += decodedLen(b["data"])
	case "tool_result":
		f.toolResults++
		for _, nested := range blocksOf(b["content"]) {
			if _, ok := nested["text"].(string); ok {
				f.addText(nested["text"])
			}
		}
	}
}

func (f *facts) document(req map[string]any) map[string]any {
	include := "none"
	if s, ok := req["includeContext"].(string); ok && s != "" {
		include = s
	}
	names := toolNames(req)
	folded, hidden := foldTexts(f.texts)
	stems := secretStemsIn(screenedTexts(f.texts, folded, hidden))
	return map[string]any{
		"message_count":     f.messages,
		"text_bytes":        f.textBytes,
		"image_bytes":       f.imageBytes,
		"audio_bytes":       f.audioBytes,
		"estimated_tokens":  int(min(f.tokens.tokens(), math.MaxInt)), // an int: OPA interns the small ones
		"texts":             nonNil(f.texts),
		"folded_texts":      folded,
		"hidden_text":       hidden,
		"secret_stems":      stems,
		"tool_names":        names,
		"tool_result_count": f.toolResults,
		"include_context":   include,
		"max_tokens":        maxTokens(req),
		"has_tools":         len(names) > 0,
		"block_types":       sortedKeys(f.types),
	}
}

// foldTexts folds each text as a reader sees it (foldText) and returns
// the folded forms that differ from their text, in order, and the hidden
// text of all of them, one line per text that hides some.
func foldTexts(texts []any) (folded []any, hidden string) {
	folded = []any{}
	var lines []string
	for _, t := range texts {
		s, _ := t.(string)
		f, h := foldText(s)
		if f != s {
			folded = append(folded, f)
		}
		if h != "" {
			lines = append(lines, h)
		}
	}
	return folded, strings.Join(lines, "\n")
}

// screenedTexts are the texts keyword rules read: as written, as folded,
// and the hidden text, as data.mcpxfw.lib.screened_texts lists them.
func screenedTexts(texts, folded []any, hidden string) []any {
	if len(folded) == 0 && hidden == "" {
		return texts
	}
	out := make([]any, 0, len(texts)+len(folded)+1)
	out = append(append(out, texts...), folded...)
	if hidden != "" {
		out = append(out, hidden)
	}
	return out
}

// blocksOf returns the content blocks of a message, which is one block or
// an array of blocks depending on the protocol era.
func blocksOf(content any) []map[string]any {
	switch c := content.(type) {
	case map[string]any:
		return []map[string]any{c}
	case []any:
		out := make([]map[string]any, 0, len(c))
		for _, b := range c {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func toolNames(req map[string]any) []any {
	tools, _ := req["tools"].([]any)
	names := []any{}
	for _, t := range tools {
		if tm, ok := t.(map[string]any); ok {
			if n, ok := tm["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

func maxTokens(req map[string]any) any {
	switch n := req["maxTokens"].(type) {
	case json.Number:
		return n
	case float64, int, int64:
		return n
	}
	return json.Number("0")
}

// decodedLen is the length of base64 data once decoded: three bytes per
// four characters, less the padding.
func decodedLen(data any) int {
	s, _ := data.(string)
	n := base64.StdEncoding.DecodedLen(len(s))
	for i := len(s) - 1; i >= 0 && i >= len(s)-2 && s[i] == '='; i-- {
		n--
	}
	return n
}

func sortedKeys(m map[string]bool) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

func nonNil(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}
