package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// elicitSeeds are the elicitation and roots documents of the golden show
// tests, each with an answer, and the stored elicitation fixtures.
func elicitSeeds() [][2]string {
	return [][2]string{
		{rendertest.FormRequest, rendertest.FormAnswer},
		{rendertest.FormRequest, `{"action":"decline"}`},
		{`{"mode":"url","message":"m","url":"https://user@xn--pypal-4ve.com:8443/a?b#c","elicitationId":"e"}`, `{"action":"accept"}`},
		{`{"mode":"url","message":"m","url":"https://ex\u0430mple.\u4f8b\u3048.jp/\u202e","elicitationId":"e"}`, `{"action":"cancel"}`},
		{`{"message":"m","url":"javascript:alert(1)"}`, `{"action":"accept","content":{"x":"\u001b[2J"}}`},
		{`{}`, `{"roots":[{"uri":"file:///a","name":"a\u202e"},{"uri":"file:///b"}]}`},
		{`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"array","items":{"oneOf":[{"const":1}]}}},"required":["b",1]}}`,
			`{"action":"accept","content":[1]}`},
	}
}

// elicitFixtures are the stored elicitation and roots requests and
// results (testdata/requests/elicitation, roots, hostile/elicitation), as
// request and result pairs.
func elicitFixtures(t testing.TB) [][2]string {
	t.Helper()
	var out [][2]string
	for _, dir := range []string{"elicitation", "roots", filepath.Join("hostile", "elicitation")} {
		root := filepath.Join("..", "..", "..", "testdata", "requests", dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil || len(b) > maxFuzzSeed {
				return err
			}
			var fx map[string]json.RawMessage
			if json.Unmarshal(b, &fx) != nil || fx["generate"] != nil {
				return nil
			}
			req := cmp.Or(string(stored(fx, "params", "paramsText")), string(stored(fx, "request", "")), `{}`)
			out = append(out, [2]string{req, cmp.Or(string(stored(fx, "result", "resultText")), `{"action":"decline"}`)})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return out
}

// FuzzRenderElicitation: for any bytes stored as an elicitation or roots
// review's request and result, and any text in its other fields, what
// review show prints (folded and --full, at either stage, on a screen of
// any width), its list and watch lines and the edit document hold nothing
// a terminal could obey: no control but newline, no format or other
// invisible character, no more than inert.MaxMarks combining marks in a
// row, only valid UTF-8; the rows are cut as FuzzRenderShow checks. For a
// form the unchanged edit document applies back to exactly the request.
func FuzzRenderElicitation(f *testing.F) {
	for i, s := range append(elicitSeeds(), elicitFixtures(f)...) {
		f.Add([]byte(s[0]), []byte(s[1]), "quoted \x1b[2J\u202e", uint8(i))
	}
	f.Fuzz(checkRenderElicitation)
}

func checkRenderElicitation(t *testing.T, request, result []byte, text string, pick uint8) {
	{
		it := fuzzItem(request, result, text, pick)
		it.Context = []byte(`{"kind":"elicitation"}`)
		if pick&0x40 != 0 {
			it.Context = []byte(`{"kind":"roots"}`)
		}
		s := Layout{Width: MinWidth + 3*int(pick>>2&0xf), WideAmbiguous: pick&0x80 != 0}
		checkShowAtWidth(t, it, s)
		var out bytes.Buffer
		List(&out, []review.Item{it}, nil, it.CreatedAt)
		_ = Arrival(&out, s, it, "show", Actions(it, "", false))
		rendertest.CheckInert(t, "list and watch", out.String())
		fuzzElicitEditDoc(t, it)
	}
}

// fuzzElicitEditDoc: the edit document of an elicitation request holds
// nothing obeyable and, unchanged, applies back to exactly a request validate.Elicitation accepts.
func fuzzElicitEditDoc(t *testing.T, it review.Item) {
	if it.Stage != review.StageRequest || ItemKind(it) != engine.KindElicitation {
		return
	}
	doc, err := EditDoc(it, it.Request)
	if err != nil {
		return // not an object: approve --edit refuses it too
	}
	rendertest.CheckInert(t, "the edit document", string(doc))
	opt := validate.Options{Era: "2025-11-25", Caps: validate.Capabilities{Form: true, URL: true}}
	if _, vs := validate.Elicitation(it.Request, opt); len(vs) > 0 || !json.Valid(it.Request) {
		return
	}
	got, err := ApplyEdit(it, it.Request, doc)
	if err != nil {
		t.Fatalf("the unchanged edit document is refused: %v\n%s", err, doc)
	}
	if !EqualJSON(it.Request, got) {
		t.Fatalf("the unchanged edit document changes the request:\n%s\n%s\ndocument:\n%s", it.Request, got, doc)
	}
}
