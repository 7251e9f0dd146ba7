package rawjson

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestInOrderOf(t *testing.T) {
	for _, c := range []struct{ v, ref, want string }{
		// A form's fields as a map decoder sorts them, and as the server wrote them.
		{`{"properties":{"b":{"title":"B","type":"string"},"a":1},"type":"object"}`,
			`{"type":"object", "properties":{"b":{"type":"string","title":"B"},"a":1}}`,
			`{"type":"object","properties":{"b":{"type":"string","title":"B"},"a":1}}`},
		// Members ref lacks follow in v's order; ref's extra members add nothing.
		{`{"a":1,"b":2,"c":3}`, `{"c":0,"x":9,"a":0}`, `{"c":3,"a":1,"b":2}`},
		// Arrays element by element; values always v's.
		{`[{"a":1,"b":2},{"a":3,"b":4},{"a":5,"b":6}]`, `[{"b":0,"a":0},{"b":0,"a":0}]`, `[{"b":2,"a":1},{"b":4,"a":3},{"a":5,"b":6}]`},
		// A reference that is not the same kind, or not JSON, changes nothing.
		{`{"a":1,"b":2}`, `[1]`, `{"a":1,"b":2}`},
		{`{"a":1,"b":2}`, `not json`, `{"a":1,"b":2}`},
		{`"x"`, `{"a":1}`, `"x"`},
		{`{}`, `{"a":1}`, `{}`},
		// A name the reference repeats places its member once.
		{`{"b":2,"a":1}`, `{"a":0,"a":0,"b":0,"a":0}`, `{"a":1,"b":2}`},
		// Names with escapes compare by what they spell.
		{`{"\u003c":1,"z":2}`, `{"z":0,"<":0}`, `{"z":2,"\u003c":1}`},
	} {
		if got := string(InOrderOf([]byte(c.v), []byte(c.ref))); got != c.want {
			t.Errorf("InOrderOf(%s, %s) = %s, want %s", c.v, c.ref, got, c.want)
		}
	}
}

// BenchmarkInOrderOfWideObject: an upstream's form with 20,000 members,
// ordered by a reference that lists them in reverse. Linear in the
// members: a scan per reference member would make it quadratic.
func BenchmarkInOrderOfWideObject(b *testing.B) {
	var v, ref []byte
	v, ref = append(v, '{'), append(ref, '{')
	const n = 20000
	for i := range n {
		if i > 0 {
			v, ref = append(v, ','), append(ref, ',')
		}
		v = append(v, fmt.Sprintf(`"k%05d":%d`, i, i)...)
		ref = append(ref, fmt.Sprintf(`"k%05d":0`, n-1-i)...)
	}
	v, ref = append(v, '}'), append(ref, '}')
	for b.Loop() {
		InOrderOf(v, ref)
	}
}

// FuzzAppendName: a name is written as json.Marshal writes it.
func FuzzAppendName(f *testing.F) {
	for _, seed := range []string{"a", "", "<b>", "a&b", `q"`, `\`, "caf\u00e9", "\u2028", "\xff", "tab\t", "~\x7f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want, _ := json.Marshal(name)
		if got := appendName(nil, name); string(got) != string(want) {
			t.Fatalf("appendName(%q) = %s, json.Marshal: %s", name, got, want)
		}
	})
}

// BenchmarkInOrderOf puts a sampling request's params in the order of
// the same request, as the relay does for every request it forwards.
func BenchmarkInOrderOf(b *testing.B) {
	raw := []byte(`{"maxTokens":1000,"messages":[{"content":{"type":"text","text":"The reviewer reads the change."},"role":"user"}],"systemPrompt":"You review pull requests.","modelPreferences":{"hints":[{"name":"claude"}],"speedPriority":0.5}}`)
	b.ReportAllocs()
	for b.Loop() {
		InOrderOf(raw, raw)
	}
}
