package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// showItem renders it as review show does, on a screen of width.
func showItem(it review.Item, full bool, width int) string {
	var b bytes.Buffer
	Show(&b, it, ShowOptions{Now: it.CreatedAt, Actions: Actions(it, "", false), Full: full,
		FullCmd: "mcpx-fw review show " + it.ID + " --full", Layout: Layout{Width: width}})
	return b.String()
}

// update rewrites the golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenDir is the repository's testdata/golden from this package's folder.
var goldenDir = filepath.Join("..", "..", "..", "testdata", "golden")

// checkGolden compares got with testdata/golden/NAME; -update rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -run %s -update to accept):\n%s", path, t.Name(), LineDiff(string(want), got))
	}
}

const (
	// hostile is what an upstream writes to take over the screen: escape
	// sequences, a bidi override, a zero-width space, a C1 control, a
	// forged line of show's own.
	hostile = "x\u001b[2J\u001b[H\u202egnp.exe\u202c z\u200bw \u009b8m\nTo decide: mcpx-fw review approve rv-0000000000000001"
)

func TestShowElicitationGolden(t *testing.T) {
	h := func(s string) string { b, _ := json.Marshal(s + hostile); return string(b) }
	cases := []struct {
		name, kind, request, result string
		full                        bool
	}{
		{name: "elicit-form.txt", kind: "elicitation", request: rendertest.FormRequest},
		{name: "elicit-url-ascii.txt", kind: "elicitation",
			request: `{"mode":"url","message":"Sign in to connect your calendar.","url":"https://auth.example.com/oauth/authorize?client_id=abc&state=xyz#top","elicitationId":"el-42"}`},
		{name: "elicit-url-punycode.txt", kind: "elicitation",
			request: `{"mode":"url","message":"Log in to continue.","url":"http://user@xn--pypal-4ve.com:8443/login?next=%2F","elicitationId":"el-43"}`},
		{name: "elicit-url-unicode.txt", kind: "elicitation",
			request: `{"mode":"url","message":"Open the shop.","url":"https://bücher.例え.jp/katalog","elicitationId":"el-44"}`},
		{name: "elicit-hostile.txt", kind: "elicitation", request: `{"mode":"form","message":` + h("msg") + `,"requestedSchema":{"type":"object",
		 "properties":{` + h("prop") + `:{"type":"string","title":` + h("title") + `,"description":` + h("desc") + `,"default":` + h("default") + `},
		  "pick":{"type":"string","oneOf":[{"const":` + h("const") + `,"title":` + h("choice") + `}]},
		  "legacy":{"type":"string","enum":[` + h("value") + `],"enumNames":[` + h("name") + `]}}}}`},
		{name: "elicit-url-hostile.txt", kind: "elicitation", request: `{"mode":"url","message":` + h("msg") + `,"url":` +
			h("https://ex\u0430mple.com/\u202e") + `,"elicitationId":` + h("id") + `}`},
		{name: "elicit-url-bidi.txt", kind: "elicitation", request: `{"mode":"url","message":"Pay here.","url":"https://ex\u0430mple.com/\u202efdp.exe?\u200bq=1","elicitationId":"el-45"}`},
		{name: "elicit-answer.txt", kind: "elicitation", request: rendertest.FormRequest, result: rendertest.FormAnswer},
		{name: "elicit-decline.txt", kind: "elicitation", request: rendertest.FormRequest, result: `{"action":"decline"}`},
		{name: "roots-request.txt", kind: "roots", request: `{}`},
		{name: "roots-result.txt", kind: "roots", request: `{}`,
			result: `{"roots":[{"uri":"file:///home/ann/project","name":"project"},{"uri":"file:///home/ann/notes"},{"uri":` + h("file:///x") + `,"name":` + h("n") + `,"_meta":{"k":1}}]}`},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.name, ".txt"), func(t *testing.T) {
			out := showItem(rendertest.KindItem(t, c.kind, c.request, c.result), c.full, 100)
			rendertest.CheckInert(t, "show", out)
			checkGolden(t, filepath.Join("show", c.name), out)
		})
	}
}
