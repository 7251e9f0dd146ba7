package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodedImage is an image of w×h pixels in a real encoder's format,
// base64 as a content block carries it.
func encodedImage(t testing.TB, format string, w, h int) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// webpHeader is the start of a WebP file whose first chunk is fourcc,
// with payload as its data (no encoder for WebP ships with Go).
func webpHeader(fourcc string, payload []byte) string {
	data := append([]byte(fourcc), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(data[4:], uint32(len(payload)))
	data = append(data, payload...)
	file := append([]byte("RIFF\x00\x00\x00\x00WEBP"), data...)
	return base64.StdEncoding.EncodeToString(file)
}

// jpegWithExif is a real JPEG behind an APP1 segment of size bytes, so its
// frame header comes only after them.
func jpegWithExif(t testing.TB, size, w, h int) string {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(encodedImage(t, "jpeg", w, h))
	seg := []byte{0xff, 0xe1, byte((size + 2) >> 8), byte(size + 2)}
	seg = append(seg, bytes.Repeat([]byte{0xff}, size)...) // 0xff in a segment's data is data, not a marker
	return base64.StdEncoding.EncodeToString(append(append(raw[:2:2], seg...), raw[2:]...))
}

// jpegWithDecoy is a real w×h JPEG whose frame header follows a stuffed
// 0xFF00 and a comment holding the frame header of a 1×1 image. Decoders
// skip the 0xFF00 as extraneous bytes and the comment as a comment; a
// reader that took 0xFF00 for a segment, with the two bytes after it for
// its length, would land on the decoy. extra bytes that are no marker
// precede the comment, which decoders skip too.
func jpegWithDecoy(t testing.TB, w, h int, extra []byte) []byte {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(encodedImage(t, "jpeg", w, h))
	decoy := []byte{0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00}
	head := append([]byte{0xff, 0xd8, 0xff, 0x00, 0x00, 0x06}, extra...)
	head = append(head, 0xff, 0xfe, 0x00, byte(len(decoy)+2))
	return append(append(head, decoy...), raw[2:]...)
}

// TestImageSizeReadsTheDecodersFrame: a JPEG is read as decoders read it,
// whatever an upstream put between its segments: a stuffed 0xFF00 and
// extraneous bytes, which decoders skip, hide neither the frame they
// decode nor put another one in its place. Read otherwise, a 4000×3000
// image would be charged as 1×1, or by its bytes.
func TestImageSizeReadsTheDecodersFrame(t *testing.T) {
	for name, data := range map[string][]byte{
		"a decoy frame behind 0xFF00":      jpegWithDecoy(t, 4000, 3000, nil),
		"extraneous bytes before a marker": jpegWithDecoy(t, 4000, 3000, []byte{0x00, 0x12, 0x34}),
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
			if err != nil || cfg.Width != 4000 || cfg.Height != 3000 {
				t.Fatalf("Go's decoder reads %d×%d (%v), want the 4000×3000 frame", cfg.Width, cfg.Height, err)
			}
			if w, h, ok := imageSize(base64.StdEncoding.EncodeToString(data)); !ok || w != 4000 || h != 3000 {
				t.Errorf("read %d×%d (ok %v), want 4000×3000 as the decoder reads it", w, h, ok)
			}
		})
	}
}

// TestTokenEstimate holds the one token estimate to its rule, part by
// part: ASCII at a quarter token a byte, every other character at a token
// per byte of its UTF-8 (never fewer than the characters a tokenizer can
// split it into), JSON as text, an image by the size its header states
// (at least 258) or else by its bytes, audio by its bytes.
func TestTokenEstimate(t *testing.T) {
	family := "👨\u200d👩\u200d👧" // three emoji joined: 18 bytes
	noise := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 1000))
	png65535 := func() string {
		raw, _ := base64.StdEncoding.DecodeString(encodedImage(t, "png", 1, 1))
		binary.BigEndian.PutUint32(raw[16:], 65535)
		binary.BigEndian.PutUint32(raw[20:], 65535)
		return base64.StdEncoding.EncodeToString(raw)
	}()
	vp8 := []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0x80, 0x07, 0x38, 0x04} // 1920×1080
	vp8l := []byte{0x2f, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(vp8l[1:], (1023)|(767<<14)) // 1024×768
	vp8x := []byte{0, 0, 0, 0, 0xff, 0x0f, 0, 0xff, 0x0f, 0}  // 4096×4096
	tests := []struct {
		name  string
		count func(c *tokenCount)
		want  int64
	}{
		{"nothing", func(c *tokenCount) {}, 0},
		{"ascii", func(c *tokenCount) { c.text("Hello, world") }, 3},
		{"ascii rounds up", func(c *tokenCount) { c.text("Hello") }, 2},
		{"ascii across texts rounds once", func(c *tokenCount) { c.text("ab"); c.text("cd") }, 1},
		{"latin with an accent", func(c *tokenCount) { c.text("café") }, 1 + 2},
		{"cjk", func(c *tokenCount) { c.text("日本語のテキスト") }, 24},
		{"emoji", func(c *tokenCount) { c.text("👍🏽") }, 8},
		{"emoji joined", func(c *tokenCount) { c.text(family) }, 18},
		{"json as text", func(c *tokenCount) { c.json(map[string]any{"q": "<b>"}) }, 3}, // {"q":"<b>"}, 11 bytes
		{"json of cjk", func(c *tokenCount) { c.json(map[string]any{"q": "日本"}) }, 2 + 6},
		{"png by its size", func(c *tokenCount) { c.image(encodedImage(t, "png", 1920, 1080)) }, 2765},
		{"png stating a huge size", func(c *tokenCount) { c.image(png65535) }, 5726449},
		{"small png at the floor", func(c *tokenCount) { c.image(encodedImage(t, "png", 10, 10)) }, 258},
		{"jpeg", func(c *tokenCount) { c.image(encodedImage(t, "jpeg", 800, 600)) }, 640},
		{"jpeg after 60 KB of metadata", func(c *tokenCount) { c.image(jpegWithExif(t, 60000, 1500, 1000)) }, 2000},
		{"gif", func(c *tokenCount) { c.image(encodedImage(t, "gif", 300, 1000)) }, 400},
		{"webp lossy", func(c *tokenCount) { c.image(webpHeader("VP8 ", vp8)) }, 2765},
		{"webp lossless", func(c *tokenCount) { c.image(webpHeader("VP8L", vp8l)) }, 1049},
		{"webp extended", func(c *tokenCount) { c.image(webpHeader("VP8X", vp8x)) }, 22370},
		{"an image of no known format by its bytes", func(c *tokenCount) { c.image(noise) }, 250},
		{"an image that is not base64", func(c *tokenCount) { c.image("!!!!") }, 1},
		{"audio", func(c *tokenCount) { c.audio(base64.StdEncoding.EncodeToString(make([]byte, 1600))) }, 100},
		{"audio rounds up", func(c *tokenCount) { c.audio(base64.StdEncoding.EncodeToString(make([]byte, 17))) }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c tokenCount
			tt.count(&c)
			if got := c.tokens(); got != tt.want {
				t.Errorf("estimated %d tokens, want %d", got, tt.want)
			}
		})
	}
}

// TestTokenEstimateNeverBelowCharacters: a tokenizer that reads bytes
// spends at most a token per byte, and at least part of one per
// character; whatever the text, the estimate of its characters beyond
// ASCII is never below their number, and never below the quarter-token
// rule it replaces.
func TestTokenEstimateNeverBelowCharacters(t *testing.T) {
	for _, s := range []string{"日本語", "한국어 텍스트", "Ελληνικά", "😀😃😄", "mixed 混合 текст 🙂", strings.Repeat("é", 1000)} {
		var c tokenCount
		c.text(s)
		nonASCII := 0
		for _, r := range s {
			if r >= utf8.RuneSelf {
				nonASCII++
			}
		}
		if got := c.tokens(); got < int64(nonASCII) || got < int64((len(s)+3)/4) {
			t.Errorf("%q: %d tokens, fewer than its %d characters beyond ASCII or a quarter of its %d bytes", s, got, nonASCII, len(s))
		}
	}
}

// TestPromptEstimate: facts.estimated_tokens counts everything a sampling
// request has the model read, each part by the estimate's rule: the
// system prompt and texts, images and audio, tool calls and results with
// their nested content, and the tool definitions offered.
func TestPromptEstimate(t *testing.T) {
	img := encodedImage(t, "png", 1500, 1000) // 2000 tokens
	audio := base64.StdEncoding.EncodeToString(make([]byte, 3200))
	tools := []any{map[string]any{"name": "search", "description": "Search the web", "inputSchema": map[string]any{"type": "object"}}}
	toolsJSON, _ := json.Marshal(tools)
	call := map[string]any{"q": "日本"}
	callJSON, _ := json.Marshal(call)
	req := map[string]any{
		"systemPrompt": "Be brief.",
		"maxTokens":    json.Number("10"),
		"tools":        tools,
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "Describe 日本"},
				map[string]any{"type": "image", "data": img, "mimeType": "image/png"},
				map[string]any{"type": "audio", "data": audio, "mimeType": "audio/wav"},
			}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "tool_use", "id": "c1", "name": "search", "input": call}},
			map[string]any{"role": "user", "content": map[string]any{"type": "tool_result", "toolUseId": "c1", "content": []any{
				map[string]any{"type": "text", "text": "result"},
				map[string]any{"type": "image", "data": img, "mimeType": "image/png"},
			}}},
		},
	}
	ascii := len("Be brief.") + len("Describe ") + len("search") + len(toolsJSON) + len(callJSON) - 6 + len("result")
	want := (ascii+3)/4 + 6 + 6 + 2000 + 200 + 2000
	if got := Facts(KindSampling, req, nil)["estimated_tokens"]; got != want {
		t.Errorf("estimated_tokens %v, want %d", got, want)
	}
}

// TestCompletionEstimate: a completion that reports no usage is charged
// the estimate of its content by the same rule, multi-byte text, images
// and audio included; one that reports usage is charged what it reports.
func TestCompletionEstimate(t *testing.T) {
	img := encodedImage(t, "png", 1500, 1000)
	audio := base64.StdEncoding.EncodeToString(make([]byte, 1600))
	tests := []struct {
		name, result string
		want         int64
	}{
		{"ascii", `{"role":"assistant","model":"m","content":{"type":"text","text":"Looks good to me."}}`, 5},
		{"cjk", `{"role":"assistant","model":"m","content":{"type":"text","text":"良いと思います"}}`, 21},
		{"emoji", `{"role":"assistant","model":"m","content":{"type":"text","text":"👍👍"}}`, 8},
		{"image", `{"role":"assistant","model":"m","content":{"type":"image","data":"` + img + `","mimeType":"image/png"}}`, 2000},
		{"audio", `{"role":"assistant","model":"m","content":{"type":"audio","data":"` + audio + `","mimeType":"audio/wav"}}`, 100},
		{"tool call", `{"role":"assistant","model":"m","content":[{"type":"tool_use","id":"c","name":"search","input":{"q":"x"}}]}`, 4},
		{"reported", `{"role":"assistant","model":"m","content":{"type":"text","text":"良い"},"_meta":{"usage":{"outputTokens":2}}}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc map[string]any
			dec := json.NewDecoder(strings.NewReader(tt.result))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if got := returnedTokens(doc, []byte(tt.result)); got != tt.want {
				t.Errorf("charged %d tokens, want %d", got, tt.want)
			}
		})
	}
}
