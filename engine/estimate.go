package engine

import (
	"encoding/json"
	"math/bits"
)

// Tokens are estimated by one rule wherever the firewall counts them: a
// sampling request's facts.estimated_tokens (what the policy reads), what
// the request reserves against its server's budget, and what a completion
// that reports no usage of its own is charged. Where the rule can bound
// what a model spends, it does, and rounds up; where it cannot, it says so:
//
//   - Text: a quarter token per byte of ASCII, the usual rate of English
//     and code (an average, not a bound: text made to tokenize badly can
//     take up to a token a byte), and a token per byte of the UTF-8 of
//     every other character (a bound: a tokenizer that reads bytes never
//     spends more, so CJK text, about a token a character, and emoji, one
//     to a few, are never under-counted).
//   - What the model reads as JSON (tool definitions, tool calls, the
//     parts of a tool result that are neither text nor media): its JSON,
//     as text.
//   - An image: a token per 750 pixels of the size its header states
//     (PNG, JPEG, GIF or WebP), and never fewer than 258: more than the
//     per-pixel rates providers publish, and the most any of them spends
//     on the smallest image. Any other image: a quarter token per byte of
//     its data, as unknown bytes.
//   - Audio: a token per 16 bytes of its data, which is 32 tokens a second
//     (the most a provider publishes) of audio at 4 kbit/s, less than any
//     speech codec models are sent.
//
// The estimate is capped at maxCharge, as a reservation is.
type tokenCount struct {
	ascii, other int64 // bytes of text
	media        int64 // tokens of images and audio
}

const (
	pixelsPerToken   = 750
	minImageTokens   = 258
	audioBytesPerTok = 16
)

// tokens is the estimate, rounded up.
func (c *tokenCount) tokens() int64 {
	return min((c.ascii+3)/4+c.other+c.media, maxCharge)
}

// text counts s.
func (c *tokenCount) text(s string) {
	other := nonASCII(s)
	c.ascii += int64(len(s)) - other
	c.other += other
}

// json counts v's compact JSON as text (HTML characters not escaped, as
// a model would be shown them).
func (c *tokenCount) json(v any) {
	if v == nil {
		return
	}
	enc := json.NewEncoder(textCounter{c})
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil { // a validated document always encodes
		c.ascii-- // the encoder's closing newline
	}
}

// textCounter counts what is written to it as text.
type textCounter struct{ c *tokenCount }

func (w textCounter) Write(p []byte) (int, error) {
	w.c.text(string(p))
	return len(p), nil
}

// block counts one content block of a prompt or a completion.
func (c *tokenCount) block(b map[string]any) {
	switch b["type"] {
	case "text":
		s, _ := b["text"].(string)
		c.text(s)
	case "image":
		c.image(b["data"])
	case "audio":
		c.audio(b["data"])
	case "tool_result":
		for _, nested := range blocksOf(b["content"]) {
			c.block(nested)
		}
		c.json(b["structuredContent"])
	case "tool_use":
		s, _ := b["name"].(string)
		c.text(s)
		c.json(b["input"])
	default:
		c.json(b)
	}
}

// image counts an image by the size its header states, else by its bytes.
func (c *tokenCount) image(data any) {
	s, _ := data.(string)
	w, h, ok := imageSize(s)
	if !ok {
		c.media += (int64(decodedLen(s)) + 3) / 4
		return
	}
	tokens := uint64(maxCharge)
	if hi, px := bits.Mul64(w, h); hi == 0 {
		tokens = min(px/pixelsPerToken+min(px%pixelsPerToken, 1), maxCharge)
	}
	c.media += max(int64(tokens), minImageTokens)
}

// audio counts audio by its bytes.
func (c *tokenCount) audio(data any) {
	s, _ := data.(string)
	c.media += (int64(decodedLen(s)) + audioBytesPerTok - 1) / audioBytesPerTok
}

// nonASCII counts the bytes of s that are not ASCII, eight at a time.
func nonASCII(s string) int64 {
	const high = 0x8080808080808080
	n := 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		n += bits.OnesCount64(x & high)
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			n++
		}
	}
	return int64(n)
}
