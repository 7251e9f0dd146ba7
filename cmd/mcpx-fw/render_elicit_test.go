package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// kindItem is a review of kind holding request (and result at the result
// stage when result is set), as the firewall stores it: the kind in the
// item's context.
func kindItem(t testing.TB, kind, request, result string) review.Item {
	t.Helper()
	for _, s := range []string{request, result} {
		if s != "" && !json.Valid([]byte(s)) {
			t.Fatalf("not JSON: %s", s)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx := `{"kind":"` + kind + `","host":{"protocol":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}},"roots":{}}}}`
	it := review.Item{ID: "rv-0000000000000001", DecisionID: "dc-0000000000000001", Server: "peer", Label: "Test peer",
		Stage: review.StageRequest, Era: "2025-11-25", State: review.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Minute),
		Reasons: []review.Reason{{Code: "elicitation-url-host", Message: "the URL's host is not in allowed_hosts"}},
		Request: json.RawMessage(request), Context: json.RawMessage(ctx)}
	if result != "" {
		it.Stage, it.Result, it.Parent = review.StageResult, json.RawMessage(result), "rv-0000000000000000"
	}
	return it
}

// showItem renders it as review show does, on a screen of width.
func showItem(it review.Item, full bool, width int) string {
	var b bytes.Buffer
	renderShow(&b, it, showOptions{now: it.CreatedAt, acts: actionsFor(it, "", false), full: full,
		fullCmd: "mcpx-fw review show " + it.ID + " --full", screen: screen{width: width}})
	return b.String()
}

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
		t.Errorf("output differs from %s (run go test -run %s -update to accept):\n%s", path, t.Name(), lineDiff(string(want), got))
	}
}

const (
	// formRequest uses every property type a form may hold: strings with
	// lengths and formats, numbers and integers with bounds, a boolean,
	// each enum form of SEP-1330 (untitled, titled with oneOf, legacy
	// enumNames, multi-select untitled and titled) and SEP-1034 defaults.
	formRequest = `{"mode":"form","message":"Please tell us about yourself.\nWe use it to set up your account.","requestedSchema":{"type":"object",
	 "properties":{
	  "name":{"type":"string","title":"Full name","description":"As on your passport","minLength":1,"maxLength":100,"default":"Ann Example"},
	  "email":{"type":"string","format":"email","title":"Email"},
	  "birthday":{"type":"string","format":"date"},
	  "age":{"type":"integer","minimum":18,"maximum":130,"default":30},
	  "height":{"type":"number","minimum":0.5,"maximum":2.5,"description":"in metres"},
	  "newsletter":{"type":"boolean","title":"Send me news","default":false},
	  "size":{"type":"string","enum":["s","m","l"],"default":"m"},
	  "color":{"type":"string","title":"Colour","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
	  "plan":{"type":"string","enum":["free","pro"],"enumNames":["Free plan","Pro plan"]},
	  "days":{"type":"array","title":"Days","minItems":1,"maxItems":2,"items":{"type":"string","enum":["mon","tue","wed"]},"default":["mon"]},
	  "tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]}}},
	 "required":["name","email","color"]}}`
	// formAnswer fills the form, leaves a field out and adds a key the
	// form does not have.
	formAnswer = `{"action":"accept","content":{"name":"Ann Example","email":"ann@example.com","age":31,"newsletter":true,
	 "color":"g","days":["mon","tue"],"tags":["b"],"unasked":"extra"}}`
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
		{name: "elicit-form.txt", kind: "elicitation", request: formRequest},
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
		{name: "elicit-answer.txt", kind: "elicitation", request: formRequest, result: formAnswer},
		{name: "elicit-decline.txt", kind: "elicitation", request: formRequest, result: `{"action":"decline"}`},
		{name: "roots-request.txt", kind: "roots", request: `{}`},
		{name: "roots-result.txt", kind: "roots", request: `{}`,
			result: `{"roots":[{"uri":"file:///home/ann/project","name":"project"},{"uri":"file:///home/ann/notes"},{"uri":` + h("file:///x") + `,"name":` + h("n") + `,"_meta":{"k":1}}]}`},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.name, ".txt"), func(t *testing.T) {
			out := showItem(kindItem(t, c.kind, c.request, c.result), c.full, 100)
			checkInertOutput(t, "show", out)
			checkGolden(t, filepath.Join("show", c.name), out)
		})
	}
}

// TestListShowsKind: review list and watch name each item's kind (from
// its context; none is sampling, as items stored before kinds are), in
// the table and in --json.
func TestListShowsKind(t *testing.T) {
	items := []review.Item{kindItem(t, "elicitation", formRequest, ""), kindItem(t, "roots", `{}`, ""),
		kindItem(t, "sampling", `{}`, ""), kindItem(t, "sampling", `{}`, "")}
	items[3].Context = nil
	var b bytes.Buffer
	renderList(&b, items, nil, items[0].CreatedAt)
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "SERVER  KIND  ") {
		t.Errorf("list header lacks KIND: %q", lines[0])
	}
	for i, want := range []string{"elicitation", "roots", "sampling", "sampling"} {
		if f := strings.Fields(lines[i+1]); len(f) < 3 || f[2] != want {
			t.Errorf("list row %d: %q, want kind %s", i+1, lines[i+1], want)
		}
		if got := listJSON(items, nil)[i].Kind; got != want {
			t.Errorf("list --json item %d: kind %q, want %s", i, got, want)
		}
	}
	b.Reset()
	if err := printArrival(&b, screen{}, items[0], "show", nil, false); err != nil || !strings.Contains(b.String(), "  elicitation request  expires") {
		t.Errorf("watch does not name the kind: %v\n%s", err, b.String())
	}
	b.Reset()
	if err := printArrival(&b, screen{}, items[1], "show", nil, true); err != nil || !strings.Contains(b.String(), `"kind":"roots"`) {
		t.Errorf("watch --json does not name the kind: %v\n%s", err, b.String())
	}
}

// TestAuditNamesKind: audit names the kind of each entry's item, in the
// table and in --json, and the chain still verifies (the kind is read
// from the item, not written into the entry).
func TestAuditNamesKind(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	st := openStore(t, cfg)
	want := map[string]string{}
	for _, kind := range []string{"elicitation", "roots", "sampling"} {
		it, err := st.Add(t.Context(), kindItem(t, kind, `{}`, ""), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want[it.ID] = kind
	}
	res := runCLI(t, "audit", "--config", cfg)
	if res.code != 0 || !strings.Contains(res.stdout, " SERVER  KIND ") {
		t.Fatalf("audit: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for id, kind := range want {
		if !regexp.MustCompile(id + ` +peer +` + kind + ` +request `).MatchString(res.stdout) {
			t.Errorf("audit does not name %s as %s:\n%s", id, kind, res.stdout)
		}
	}
	res = runCLI(t, "audit", "--json", "--config", cfg)
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var e struct {
			ID   string `json:"review_id"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Kind != want[e.ID] {
			t.Errorf("audit --json line %s: kind %q, want %q (%v)", line, e.Kind, want[e.ID], err)
		}
	}
	if res := runCLI(t, "audit", "--verify", "--config", cfg); res.code != 0 {
		t.Errorf("audit --verify: exit %d %s", res.code, res.stderr)
	}
}
