package rawjson

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// TestMembers: every member, repeats included, in order, values as
// written; what is not an object, or is malformed, yields what was read
// before the fault.
func TestMembers(t *testing.T) {
	tests := []struct {
		raw  string
		want []Member
	}{
		{`{}`, nil},
		{` { "a" : 1 , "b":[1,{"c":"}"}] ,"a":"x\"y"} `, []Member{
			{"a", json.RawMessage(`1`)}, {"b", json.RawMessage(`[1,{"c":"}"}]`)}, {"a", json.RawMessage(`"x\"y"`)}}},
		{`{"\u0061":true}`, []Member{{"a", json.RawMessage(`true`)}}},
		{`{"a":null,"b":`, []Member{{"a", json.RawMessage(`null`)}}},
		{`{"a":1 "b":2}`, []Member{{"a", json.RawMessage(`1`)}}},
		{`[{"a":1}]`, nil},
		{`"a"`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		if got := Members([]byte(tt.raw)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Members(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// TestEachMember: names as written between their quotes; an escape in a
// name, or anything but an object, refuses the whole object.
func TestEachMember(t *testing.T) {
	tests := []struct {
		raw  string
		want []string // name=value; nil: refused
	}{
		{`{}`, []string{}},
		{`{"a":1,"b":{"c":[2]}}`, []string{`a=1`, `b={"c":[2]}`}},
		{`{"\u0061":1}`, nil},
		{`[1]`, nil},
		{`{"a":1,}`, nil},
	}
	for _, tt := range tests {
		got := []string{}
		ok := EachMember([]byte(tt.raw), func(name, v []byte) bool {
			got = append(got, string(name)+"="+string(v))
			return true
		})
		if ok != (tt.want != nil) || (ok && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("EachMember(%s) = %q, %v; want %q", tt.raw, got, ok, tt.want)
		}
	}
}

// TestReadMembers: a member without a slot, or a repeated one, refuses
// the object.
func TestReadMembers(t *testing.T) {
	read := func(raw string) ([]byte, bool) {
		var a []byte
		ok := ReadMembers([]byte(raw), func(name []byte) *[]byte {
			if string(name) == "a" {
				return &a
			}
			return nil
		})
		return a, ok
	}
	if a, ok := read(`{"a":[1]}`); !ok || string(a) != `[1]` {
		t.Errorf("known member: %q %v", a, ok)
	}
	for _, raw := range []string{`{"a":1,"a":2}`, `{"a":1,"b":2}`} {
		if _, ok := read(raw); ok {
			t.Errorf("ReadMembers accepted %s", raw)
		}
	}
}

// TestValues: the checks of one value by its bytes.
func TestValues(t *testing.T) {
	for v, want := range map[string]bool{`"abc"`: true, `""`: true, `"a\"b"`: false, `"a`: false, `1`: false} {
		if PlainString([]byte(v)) != want {
			t.Errorf("PlainString(%s) = %v", v, !want)
		}
	}
	for v, want := range map[string]bool{`0`: true, `-12`: true, `123456789012345678`: true, `1234567890123456789`: false, `1.0`: false, `1e3`: false, `-`: false, `"1"`: false} {
		if Integer([]byte(v)) != want {
			t.Errorf("Integer(%s) = %v", v, !want)
		}
	}
	var elems []string
	if !EachElement([]byte(` [1, {"a":[2]} ,"x"] `), func(e []byte) bool { elems = append(elems, string(e)); return true }) ||
		!reflect.DeepEqual(elems, []string{`1`, `{"a":[2]}`, `"x"`}) {
		t.Errorf("EachElement = %q", elems)
	}
}

// TestSplitter: each frame is handed to pick whole, with whether it nests
// deeper than the SDK decodes; whitespace between frames passes as it is,
// and a stream that does not start a frame passes unread from there on.
func TestSplitter(t *testing.T) {
	deep := bytes.Repeat([]byte{'['}, SDKMaxDepth+1)
	deep = append(deep, bytes.Repeat([]byte{']'}, SDKMaxDepth+1)...)
	in := "{\"a\":\"}{\\\"}\"}\n [1,[2]]\r\n" + string(deep) + "\nnot json {\"b\":1}"
	type seen struct {
		frame string
		deep  bool
	}
	var frames []seen
	s := NewSplitter(bytes.NewReader([]byte(in)), func(frame []byte, d bool) []byte {
		frames = append(frames, seen{string(frame), d})
		return frame
	})
	out, err := io.ReadAll(s)
	if err != nil || string(out) != in {
		t.Fatalf("read %q, %v; want the stream unchanged", out, err)
	}
	want := []seen{{`{"a":"}{\"}"}`, false}, {`[1,[2]]`, false}, {string(deep), true}}
	if !reflect.DeepEqual(frames, want) {
		t.Errorf("frames = %+v, want %+v", frames, want)
	}
}

// FuzzSplitter: whatever the stream, a pick that returns each frame gives
// the SDK the stream byte for byte, and every frame handed on is one
// JSON value when the stream is valid JSON values.
func FuzzSplitter(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, "{\"a\":[1,\"]\"]}\n[2]", `{"a":"\\"}`, "  {}\n", `{"a":`, `x{}`, `{}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var frames [][]byte
		out, err := io.ReadAll(NewSplitter(bytes.NewReader(in), func(frame []byte, _ bool) []byte {
			frames = append(frames, bytes.Clone(frame))
			return frame
		}))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("read %q, %v; want %q", out, err, in)
		}
		if !validValues(in) {
			return
		}
		for _, frame := range frames {
			if !json.Valid(frame) {
				t.Fatalf("frame %q of a stream of valid values is not one value", frame)
			}
		}
	})
}

// validValues reports whether in is JSON objects and arrays separated by
// white space.
func validValues(in []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(in))
	for {
		var v json.RawMessage
		switch err := dec.Decode(&v); {
		case err == io.EOF:
			return true
		case err != nil || (v[0] != '{' && v[0] != '['):
			return false
		}
	}
}

// FuzzMembers: for a valid JSON object, Members reads as many members as
// the decoder's tokens show, each value one valid JSON value, and
// EachMember agrees with it wherever no name holds an escape (and the
// bytes are UTF-8: Members decodes a name, replacing what is not).
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1,"a":[2,{"b":"}"}]}`, `{"\u0061":"x\\"}`, ` {"a" : null } `, `{"a":1e5,"b":-0.5}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ms := Members(raw)
		if !json.Valid(raw) || !isObjectValue(raw) {
			return
		}
		if n := topLevelKeys(t, raw); len(ms) != n {
			t.Fatalf("Members read %d members of %s, the decoder %d", len(ms), raw, n)
		}
		for _, m := range ms {
			if !json.Valid(m.Value) {
				t.Fatalf("member %q of %s has value %q", m.Key, raw, m.Value)
			}
		}
		var names []string
		if utf8.Valid(raw) && EachMember(raw, func(name, _ []byte) bool { names = append(names, string(name)); return true }) {
			for i, m := range ms {
				if names[i] != m.Key {
					t.Fatalf("EachMember named %q where Members read %q in %s", names[i], m.Key, raw)
				}
			}
		}
	})
}

func isObjectValue(raw []byte) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// topLevelKeys counts the names of the object raw, repeats included, by
// the decoder's tokens.
func topLevelKeys(t *testing.T, raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// FuzzDecodeName: a name as Members cuts it from an object (a quoted
// string, to its first unescaped quote) decodes as json.Unmarshal decodes
// it, the plain names taken without the decoder included.
func FuzzDecodeName(f *testing.F) {
	for _, seed := range []string{`a"`, `"`, `\u0061"`, `caf\xc3\xa9"`, "\xff\"", "tab\there\"", `\"x"`, `a\`, `é"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, tail []byte) {
		raw := append([]byte{'"'}, tail...)
		end := valueEnd(raw, 0)
		if end < 0 {
			return
		}
		q := raw[:end]
		var want string
		wantErr := json.Unmarshal(q, &want)
		got, ok := decodeName(q)
		if ok != (wantErr == nil) || got != want {
			t.Fatalf("decodeName(%q) = %q, %v; json.Unmarshal: %q, %v", q, got, ok, want, wantErr)
		}
	})
}

// BenchmarkMembers reads the members of a sampling request's params, the
// object the relay orders most often.
func BenchmarkMembers(b *testing.B) {
	raw := []byte(`{"maxTokens":1000,"messages":[{"content":{"type":"text","text":"The reviewer reads the change."},"role":"user"}],"systemPrompt":"You review pull requests.","modelPreferences":{"hints":[{"name":"claude"}],"speedPriority":0.5}}`)
	b.ReportAllocs()
	for b.Loop() {
		if len(Members(raw)) != 4 {
			b.Fatal("members")
		}
	}
}
