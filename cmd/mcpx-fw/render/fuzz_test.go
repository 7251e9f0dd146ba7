package render

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// maxFuzzSeed keeps the fixtures of megabytes (limits, floods) out of the
// fuzz corpus, where they would only slow every run.
const maxFuzzSeed = 64 << 10

// renderSeeds are the requests and completions of testdata/requests and
// testdata/results, as stored (generated ones left out).
func renderSeeds(t testing.TB) (requests, results [][]byte) {
	t.Helper()
	for _, kind := range []string{"requests", "results"} {
		root := filepath.Join("..", "..", "..", "testdata", kind)
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
			for _, req := range [][]byte{stored(fx, "params", "paramsText"), stored(fx, "request", "")} {
				if req != nil {
					requests = append(requests, req)
				}
			}
			if res := stored(fx, "result", "resultText"); res != nil {
				results = append(results, res)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return requests, results
}

// stored is a fixture's member as the bytes it stands for: key as JSON,
// or textKey's string as written.
func stored(fx map[string]json.RawMessage, key, textKey string) []byte {
	if raw, ok := fx[key]; ok {
		return raw
	}
	var s string
	if textKey != "" && json.Unmarshal(fx[textKey], &s) == nil {
		return []byte(s)
	}
	return nil
}

// FuzzRenderShow: for any bytes stored as a review's request and
// completion, and any reason, note and edit diff, what review show prints
// (folded and --full, at either stage, on a screen of any width) and the
// edit document hold nothing a terminal could obey: no control but
// newline, no format or other invisible character, no more than
// inert.MaxMarks combining marks in a row, only valid UTF-8. Show's output
// also goes through inert's sink unchanged, so its fields need no help
// from the sink. No row is wider than the screen, and the rows are show's
// lines cut (see checkShowRows), so a row of prose starts with the gutter
// or the continuation mark after its indentation. For a request
// validate.Request accepts, the unchanged edit document applies back to
// exactly that request. Seeded with every stored request and completion
// under testdata/requests and testdata/results (the hostile ones
// included).
func FuzzRenderShow(f *testing.F) {
	requests, results := renderSeeds(f)
	for i, req := range requests {
		f.Add(req, results[i%len(results)], "quoted \x1b[2J\u202e", uint8(i))
	}
	f.Fuzz(func(t *testing.T, request, result []byte, text string, pick uint8) {
		it := fuzzItem(request, result, text, pick)
		s := Layout{Width: MinWidth + 3*int(pick>>2), WideAmbiguous: pick&0x80 != 0}
		checkShowAtWidth(t, it, s)
		fuzzEditDoc(t, it)
	})
}

// checkShowRows: out, show laid out for s, has no row wider than s but
// show's commands (printed whole to be copied), and its rows are the lines
// of uncut (the same show on a screen no line reaches the edge of): each
// line's first row is the line's start, each further row starts with
// indentation and the continuation mark, and the rows read back as the
// line. Since no line of show starts with the mark, every row of a line
// of prose starts with the gutter or the mark.
func checkShowRows(t *testing.T, s Layout, out, uncut string) {
	t.Helper()
	for i, row := range strings.Split(out, "\n") {
		command := strings.HasPrefix(strings.TrimLeft(row, " "), "mcpx-fw review ")
		if n := rendertest.TermColumns(row, s.WideAmbiguous); n > s.cols() && !command {
			t.Fatalf("row %d is %d columns wide on a screen of %d: %q", i+1, n, s.cols(), row)
		}
	}
	if diff := cmp.Diff(strings.Split(uncut, "\n"), strings.Split(rendertest.JoinRows(out), "\n")); diff != "" {
		t.Fatalf("the rows do not read back as show's lines (-lines +rows):\n%s", diff)
	}
}

// fuzzItem is a pending review holding the fuzzed bytes; pick chooses the
// stage and whether it was decided.
func fuzzItem(request, result []byte, text string, pick uint8) review.Item {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it := review.Item{ID: "rv-" + text, DecisionID: "dc-1", Server: text, Label: text, Stage: review.StageRequest,
		Era: text, State: review.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Minute), Request: request,
		Reasons: []review.Reason{{Code: text, Message: text}}}
	if pick&1 != 0 {
		it.Stage, it.Result, it.Parent = review.StageResult, result, text
	}
	if pick&2 != 0 {
		it.State, it.DecidedBy, it.DecidedAt, it.Note, it.EditDiff = review.StateApproved, text, at, text, text
		it.Answer, it.FinishedAt, it.FinishNote = result, at, text
	}
	return it
}

func sinkOf(b []byte) string {
	var out bytes.Buffer
	w := inert.NewWriter(&out)
	_, _ = w.Write(b)
	_ = w.Flush()
	return out.String()
}

// fuzzEditDoc: the edit document of it holds nothing obeyable and, for an
// accepted request, reads back as the request.
func fuzzEditDoc(t *testing.T, it review.Item) {
	if it.Stage != review.StageRequest {
		return
	}
	doc, err := EditDoc(it, it.Request)
	if err != nil {
		return // not an object: approve --edit refuses it too
	}
	rendertest.CheckInert(t, "the edit document", string(doc))
	_, vs := validate.Request(it.Request, validate.Options{Era: "2025-11-25", Caps: validate.Capabilities{Tools: true, Context: true}})
	if len(vs) > 0 {
		return
	}
	got, err := ApplyEdit(it, it.Request, doc)
	if err != nil {
		t.Fatalf("the unchanged edit document is refused: %v\n%s", err, doc)
	}
	if !EqualJSON(canonicalEdit(it.Request), canonicalEdit(got)) {
		t.Fatalf("the unchanged edit document changes the request:\n%s\n%s\ndocument:\n%s", it.Request, got, doc)
	}
}

// canonicalEdit drops an empty systemPrompt and empty stopSequences, which
// the document cannot tell from absent ones (the relay's encoding drops
// them too before a request is stored).
func canonicalEdit(raw []byte) []byte {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	if obj["systemPrompt"] == "" {
		delete(obj, "systemPrompt")
	}
	if s, ok := obj["stopSequences"].([]any); ok && len(s) == 0 {
		delete(obj, "stopSequences")
	}
	b, _ := json.Marshal(obj)
	return b
}

// checkShowAtWidth holds show's output for it at s, folded and full, to
// the rules every fuzz target of the renderer checks: inert, unchanged by
// the sink, and cut into rows that join back to the uncut output.
func checkShowAtWidth(t *testing.T, it review.Item, s Layout) {
	t.Helper()
	for _, full := range []bool{false, true} {
		show := func(s Layout) string {
			var out bytes.Buffer
			Show(&out, it, ShowOptions{Now: it.CreatedAt, Full: full, Actions: Actions(it, "", true), FullCmd: "show --full", Layout: s})
			return out.String()
		}
		out := show(s)
		rendertest.CheckInert(t, "show", out)
		if sunk := sinkOf([]byte(out)); sunk != out {
			t.Fatalf("show relies on the sink: it changed\n%q\nto\n%q", out, sunk)
		}
		checkShowRows(t, s, out, show(Layout{Width: 1 << 30}))
	}
}
