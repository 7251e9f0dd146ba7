package inert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestForms(t *testing.T) {
	cases := []struct{ in, text, line, quote, word string }{
		{"plain", "plain", "plain", `"plain"`, "plain"},
		{"", "", "", `""`, `""`},
		{"two\nlines", "two\nlines", `two\nlines`, `"two\nlines"`, `"two\nlines"`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`, `"\x1b[2J\x1b[H"`, `"\x1b[2J\x1b[H"`},
		{`typed \x1b`, `typed \\x1b`, `typed \\x1b`, `"typed \\x1b"`, `"typed \\x1b"`},
		{"tab\tcr\r del\x7f nul\x00", `tab\tcr\r del\x7f nul\x00`, `tab\tcr\r del\x7f nul\x00`, `"tab\tcr\r del\x7f nul\x00"`, `"tab\tcr\r del\x7f nul\x00"`},
		{"csi \u009b nel \u0085", `csi \u009b nel \u0085`, `csi \u009b nel \u0085`, `"csi \u009b nel \u0085"`, `"csi \u009b nel \u0085"`},
		{"bad \xff \xe2\x80", `bad \xff \xe2\x80`, `bad \xff \xe2\x80`, `"bad \xff \xe2\x80"`, `"bad \xff \xe2\x80"`},
		{"rlo \u202eevil\u202c", `rlo \u202eevil\u202c`, `rlo \u202eevil\u202c`, `"rlo \u202eevil\u202c"`, `"rlo \u202eevil\u202c"`},
		{"a\u200bb\u200dc\ufeffd\u00ade\u2066f\u061cg\u200eh", `a\u200bb\u200dc\ufeffd\u00ade\u2066f\u061cg\u200eh`, `a\u200bb\u200dc\ufeffd\u00ade\u2066f\u061cg\u200eh`, "", ""},
		{"tag \U000e0041\U000e007f vs \ufe0f\U000e0100 filler \u3164", `tag \U000e0041\U000e007f vs \ufe0f\U000e0100 filler \u3164`, "", "", ""},
		{"line\u2028para\u2029 pua \ue000", `line\u2028para\u2029 pua \ue000`, "", "", ""},
		{`say "hi"`, `say "hi"`, `say "hi"`, `"say \"hi\""`, `"say \"hi\""`},
		{"Grüße, 世界 🦓 é\u0301 nbsp\u00a0x ÿ", "Grüße, 世界 🦓 é\u0301 nbsp\u00a0x ÿ", "Grüße, 世界 🦓 é\u0301 nbsp\u00a0x ÿ", "", ""},
		{"call-1", "call-1", "call-1", `"call-1"`, "call-1"},
		{"image/png", "image/png", "image/png", "", "image/png"},
		{"lookup id=x]", "lookup id=x]", "lookup id=x]", "", `"lookup id=x]"`},
		{"\ufffd", "\ufffd", "\ufffd", "", `"` + "\ufffd" + `"`},
		// Combining marks: three on a character pass (Vietnamese, Hindi,
		// pointed Hebrew, Tibetan), a pile of them is escaped from the
		// fourth on, and each new character starts a new count.
		{"Vie\u0323\u0302t क़्ि שָּׁ སྒྲུ", "Vie\u0323\u0302t क़्ि שָּׁ སྒྲུ", "Vie\u0323\u0302t क़्ि שָּׁ སྒྲུ", "", ""},
		{"Z\u0301\u0302\u0303\u0304\u0305a\u0306", "Z\u0301\u0302\u0303\\u0304\\u0305a\u0306", "", "\"Z\u0301\u0302\u0303\\u0304\\u0305a\u0306\"", ""},
		{"\u20dd\u20dd\u20dd\u20dd", "\u20dd\u20dd\u20dd\\u20dd", "", "", ""},
	}
	for _, c := range cases {
		check := func(name, got, want string) {
			if want != "" && got != want {
				t.Errorf("%s(%q) = %s, want %s", name, c.in, got, want)
			}
		}
		check("Text", Text(c.in), c.text)
		check("Line", Line(c.in), c.line)
		check("Quote", Quote(c.in), c.quote)
		check("Word", Word(c.in), c.word)
	}
}

func TestJSON(t *testing.T) {
	in := "esc\x1b del\x7f csi\u009b rlo\u202e zw\u200b bom\ufeff tag\U000e0041 ok é🦓 \"q\" \\ \n"
	enc, err := json.Marshal(map[string]string{"k\u202e": in})
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(enc)
	want := `{"k\u202e":"esc\u001b del\u007f csi\u009b rlo\u202e zw\u200b bom\ufeff tag\udb40\udc41 ok é🦓 \"q\" \\ \n"}`
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["k\u202e"] != in {
		t.Errorf("JSON changed the value: %q, %v", back, err)
	}
	if got := JSON([]byte("[\"a\xffb\"]")); string(got) != `["a\ufffdb"]` {
		t.Errorf("invalid UTF-8 in a string: %s", got)
	}
	zalgo := "[\"e\u0301\u0302\u0303\u0304\u0305\",\"\u0301\u0302\u0303\u0304\"]"
	if got, want := JSON([]byte(zalgo)), "[\"e\u0301\u0302\u0303\\u0304\\u0305\",\"\u0301\u0302\u0303\\u0304\"]"; string(got) != want {
		t.Errorf("JSON of piled marks:\n got %s\nwant %s", got, want)
	}
}

// TestWriterCountsMarksAcrossWrites: the sink escapes a pile of marks
// however it is cut into writes, and however many fields it is made of.
func TestWriterCountsMarksAcrossWrites(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, part := range []string{"e\u0301", "\u0302\u0303", "\u0304", "\u0305 a\u0306"} {
		fmt.Fprint(w, part)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "e\u0301\u0302\u0303\\u0304\\u0305 a\u0306"; b.String() != want {
		t.Errorf("sink wrote %q, want %q", b.String(), want)
	}
}

func TestWriterJoinsSplitCharacters(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	text := []byte("é🦓\u202e\n")
	for i := range text {
		if n, err := w.Write(text[i : i+1]); n != 1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	fmt.Fprint(w, `\x1b stays `, "\xf0\x9f")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "é🦓\\u202e\n\\x1b stays \\xf0\\x9f"; b.String() != want {
		t.Errorf("sink wrote %q, want %q", b.String(), want)
	}
}

// checkInert fails t when s holds anything a reader could not see or a
// terminal could obey: invalid UTF-8, a control other than a newline (when
// lines is true), a format character, more than MaxMarks combining marks
// (Mn, Me) in a row.
func checkInert(t *testing.T, what, s string, lines bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s is not valid UTF-8: %q", what, s)
	}
	run := 0
	for _, r := range s {
		if !unicode.In(r, unicode.Mn, unicode.Me) {
			run = 0
		} else if run++; run > MaxMarks {
			t.Fatalf("%s holds %d combining marks in a row: %q", what, run, s)
		}
		if r == '\n' && lines {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || !Shown(r) {
			t.Fatalf("%s holds %U: %q", what, r, s)
		}
	}
}

// unescape reverses the reading forms (the test of their being
// unambiguous): every backslash starts an escape, and each escape means
// exactly one character or byte.
// A quoted form (quoted true) holds no quote that is not escaped.
func unescape(t *testing.T, s string, quoted bool) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if quoted && s[i] == '"' {
			t.Fatalf("a bare quote inside %q", s)
		}
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			t.Fatalf("a lone backslash ends %q", s)
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
		if digits == 0 {
			named := map[byte]string{'\\': `\`, '"': `"`, 't': "\t", 'n': "\n", 'r': "\r"}[s[i]]
			if named == "" {
				t.Fatalf("unknown escape \\%c in %q", s[i], s)
			}
			b.WriteString(named)
			continue
		}
		v, err := strconv.ParseUint(s[i+1:i+1+digits], 16, 32)
		if err != nil {
			t.Fatalf("escape in %q: %v", s, err)
		}
		if s[i] == 'x' && v >= utf8.RuneSelf {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
		i += digits
	}
	return b.String()
}

// FuzzForms: every form of any string is inert (no control, format or
// invisible character, no pile of more than MaxMarks combining marks) and
// reads back as the string; the sink writes the same whatever the writes
// it is given, and changes exactly the strings Clean refuses.
func FuzzForms(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J\x1b[Hfake", `\x1b`, "\u202e\u2066\u200b\ufeff\U000e0041", "\xff\xe2\x80", "é🦓\n\t\r\"\\", "\u009b31m", "\xed\xa0\x80",
		"Z\u0301\u0302\u0303\u0304\u0305\u0306\u20dd", "e\u0301\u0302\u200b\u0303\u0304\u0305\xff\u0306"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		text, line, quote := Text(s), Line(s), Quote(s)
		checkInert(t, "Text", text, true)
		checkInert(t, "Line", line, false)
		checkInert(t, "Quote", quote, false)
		checkInert(t, "Word", Word(s), false)
		if got := unescape(t, text, false); got != s {
			t.Fatalf("Text is ambiguous: %q reads back as %q", s, got)
		}
		if got := unescape(t, line, false); got != s {
			t.Fatalf("Line is ambiguous: %q reads back as %q", s, got)
		}
		if got := unescape(t, quote[1:len(quote)-1], true); got != s {
			t.Fatalf("Quote is ambiguous: %q reads back as %q", s, got)
		}
		fuzzJSON(t, s)
		fuzzWriter(t, s, int(chunk)%7+1)
	})
}

// fuzzJSON: JSON of any encoded string is inert, valid, and means the same.
func fuzzJSON(t *testing.T, s string) {
	enc, _ := json.Marshal([]string{s})
	got := JSON(enc)
	checkInert(t, "JSON", string(got), false)
	var back, want []string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("JSON(%s) = %s is not JSON: %v", enc, got, err)
	}
	_ = json.Unmarshal(enc, &want)
	if back[0] != want[0] {
		t.Fatalf("JSON changed %q to %q", want[0], back[0])
	}
}

// fuzzWriter: the sink, fed s in chunks, writes what it writes for s in
// one piece, and nothing a terminal obeys.
func fuzzWriter(t *testing.T, s string, chunk int) {
	var whole, parts bytes.Buffer
	w := NewWriter(&whole)
	_, _ = w.Write([]byte(s))
	_ = w.Flush()
	w = NewWriter(&parts)
	for b := []byte(s); len(b) > 0; b = b[min(chunk, len(b)):] {
		_, _ = w.Write(b[:min(chunk, len(b))])
	}
	_ = w.Flush()
	if whole.String() != parts.String() {
		t.Fatalf("sink: %q whole gives %q, in chunks of %d %q", s, whole.String(), chunk, parts.String())
	}
	checkInert(t, "sink output", whole.String(), true)
	if Clean(s) != (whole.String() == s) {
		t.Fatalf("Clean(%q) = %v, but the sink writes %q", s, Clean(s), whole.String())
	}
}
