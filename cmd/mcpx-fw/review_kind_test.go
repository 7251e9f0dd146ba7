package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestListShowsKind: review list and watch name each item's kind (from
// its context; none is sampling, as items stored before kinds are), in
// the table and in --json.
func TestListShowsKind(t *testing.T) {
	items := []review.Item{rendertest.KindItem(t, "elicitation", rendertest.FormRequest, ""), rendertest.KindItem(t, "roots", `{}`, ""),
		rendertest.KindItem(t, "sampling", `{}`, ""), rendertest.KindItem(t, "sampling", `{}`, "")}
	items[3].Context = nil
	var b bytes.Buffer
	render.List(&b, items, nil, items[0].CreatedAt)
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "SERVER  KIND  ") {
		t.Errorf("list header lacks KIND: %q", lines[0])
	}
	for i, want := range []string{"elicitation", "roots", "sampling", "sampling"} {
		if f := strings.Fields(lines[i+1]); len(f) < 3 || f[2] != want {
			t.Errorf("list row %d: %q, want kind %s", i+1, lines[i+1], want)
		}
		if got := render.ListJSON(items, nil)[i].Kind; got != want {
			t.Errorf("list --json item %d: kind %q, want %s", i, got, want)
		}
	}
	b.Reset()
	if err := printArrival(&b, render.Layout{}, items[0], "show", nil, false); err != nil || !strings.Contains(b.String(), "  elicitation request  expires") {
		t.Errorf("watch does not name the kind: %v\n%s", err, b.String())
	}
	b.Reset()
	if err := printArrival(&b, render.Layout{}, items[1], "show", nil, true); err != nil || !strings.Contains(b.String(), `"kind":"roots"`) {
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
		it, err := st.Add(t.Context(), rendertest.KindItem(t, kind, `{}`, ""), time.Minute)
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

// TestElicitEditRefusedIsKept: approve --edit on a form whose edit changes
// its shape refuses it naming the field, leaves the review pending, and
// keeps the edit in its file, naming the file and the command that tries
// it again; --edit on roots is refused with a clear line.
func TestElicitEditRefusedIsKept(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	st := openStore(t, cfg)
	form, err := st.Add(t.Context(), rendertest.KindItem(t, "elicitation", rendertest.FormRequest, ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", `sed -i 's/"maxLength":100,/"maxLength":5000,/; s/Please tell us/Kindly tell us/'`)
	res := runCLI(t, "review", "approve", form.ID, "--edit", "--config", cfg)
	if res.code != 1 || !strings.Contains(res.stderr, `the edit is refused: field 1 ("name"): its shape changed (maxLength)`) {
		t.Fatalf("approve --edit: exit %d, %s", res.code, res.stderr)
	}
	m := regexp.MustCompile(`Your edit is kept in (\S+); fix it and run: mcpx-fw review approve ` + form.ID + ` --edit-file (\S+)`).FindStringSubmatch(res.stderr)
	if m == nil || m[1] != m[2] {
		t.Fatalf("the refusal does not say where the edit is kept:\n%s", res.stderr)
	}
	kept, err := os.ReadFile(m[1])
	if err != nil || !strings.Contains(string(kept), "Kindly tell us") || !strings.Contains(string(kept), `"maxLength":5000`) {
		t.Errorf("the kept file does not hold the edit: %v\n%s", err, kept)
	}
	if it, _ := st.Get(t.Context(), form.ID); it.State != review.StatePending {
		t.Errorf("after the refused edit the review is %s", it.State)
	}

	roots, err := st.Add(t.Context(), rendertest.KindItem(t, "roots", `{}`, ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, "review", "approve", roots.ID, "--edit", "--config", cfg)
	if res.code != 1 || !strings.Contains(res.stderr, "a roots request or list cannot be edited: approve it as it is or reject it") {
		t.Errorf("approve --edit on roots: exit %d, %s", res.code, res.stderr)
	}
}

// TestAnswerRefusesElicitation: review answer writes completions, which
// only a sampling request takes; an elicitation or roots review is
// refused, and stays pending.
func TestAnswerRefusesElicitation(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000)+"    operator_answer: true\n")
	st := openStore(t, cfg)
	for _, kind := range []string{"elicitation", "roots"} {
		it, err := st.Add(t.Context(), rendertest.KindItem(t, kind, rendertest.FormRequest, ""), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		res := runCLI(t, "review", "answer", it.ID, "--text", "hello", "--config", cfg)
		if res.code != 1 || !strings.Contains(res.stderr, "is "+kind+", which the host answers") {
			t.Errorf("answer on %s: exit %d, %s", kind, res.code, res.stderr)
		}
		if got, _ := st.Get(t.Context(), it.ID); got.State != review.StatePending {
			t.Errorf("after the refused answer the %s review is %s", kind, got.State)
		}
	}
}
