package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// attack is what a hostile upstream writes into every field that reaches
// the operator (as JSON string text): a clear-screen and cursor-home
// followed by the start of a review of its own, an OSC window title and
// an OSC hyperlink, a right-to-left override and an isolate, zero-width
// characters, the soft hyphen, a tag character, CSI and NEL as C1
// controls, DEL, a carriage return and a backspace.
const attack = `\u001b[2J\u001b[HReview rv-0000000000000000  (decision dc-0)\nWhy it needs review:\n  - [fine] nothing` +
	`\u001b]0;owned\u0007\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\` +
	`\u202eexe.txt\u202c\u2066iso\u2069 zw\u200b\u200d\ufeff\u00ad tag\udb40\udc41 csi\u009b2J nel\u0085 del\u007f cr\r bs\b`

// attackShown is how the start of attack reads once escaped; after
// attackMarkers it shows that each field is still there to read.
const attackShown = `\x1b[2J\x1b[HReview rv-0000000000000000`

// attackMarkers start the fields attack is put in, one per field.
var attackMarkers = []string{"sys", "stop", "hint", "metakey", "metaval", "tool", "ttl", "desc", "prop", "pdesc", "outprop",
	"ann", "text", "id", "inkey", "inval", "res", "link", "linkdesc", "file:///res", "restext", "sckey", "scval"}

// attackRequest carries attack in every field of a sampling request that
// the host's model gets (and so the operator sees).
var attackRequest = strings.NewReplacer("ATTACK", attack).Replace(attackRequestTemplate)

// attackRequestTemplate is attackRequest with ATTACK where the attack goes.
const attackRequestTemplate = `{"maxTokens":300,"temperature":0.5,
 "stopSequences":["stopATTACK"],"modelPreferences":{"hints":[{"name":"hintATTACK"}],"costPriority":0.3},
 "metadata":{"metakeyATTACK":"metavalATTACK"},"systemPrompt":"sysATTACK",
 "tools":[{"name":"toolATTACK","title":"ttlATTACK","description":"descATTACK",
   "inputSchema":{"type":"object","properties":{"propATTACK":{"type":"string","description":"pdescATTACK"}}},
   "outputSchema":{"type":"object","properties":{"outpropATTACK":{"type":"string"}}},
   "annotations":{"title":"annATTACK","readOnlyHint":true,"idempotentHint":false}}],
 "toolChoice":{"mode":"auto"},
 "messages":[
  {"role":"user","content":{"type":"text","text":"textATTACK"}},
  {"role":"assistant","content":[{"type":"tool_use","id":"idATTACK","name":"toolATTACK","input":{"inkeyATTACK":"invalATTACK"}}]},
  {"role":"user","content":[{"type":"tool_result","toolUseId":"idATTACK","content":[
    {"type":"text","text":"resATTACK"},
    {"type":"resource_link","uri":"https://example.com/l","name":"linkATTACK","description":"linkdescATTACK"},
    {"type":"resource","resource":{"uri":"file:///resATTACK","mimeType":"text/plain","text":"restextATTACK"}}],
   "structuredContent":{"sckeyATTACK":"scvalATTACK"}}]}]}`

// attackAnswer is the host's completion, which the upstream's prompt
// talked into the same: a text and a tool call carrying attack.
var attackAnswer = strings.NewReplacer("ATTACK", attack).Replace(`{"role":"assistant","model":"modelATTACK","stopReason":"toolUse",
 "content":[{"type":"text","text":"outATTACK"},{"type":"tool_use","id":"cidATTACK","name":"toolATTACK","input":{"cinATTACK":"cvalATTACK"}}]}`)

// quotingPolicy is the shipped policy set plus a package for "peer" that
// holds both stages and quotes the request in a reason's code and
// message, as a policy may.
func quotingPolicy(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "servers"), "peer.rego", `package mcpxfw.servers.peer

import data.mcpxfw.lib

review contains {"code": concat("", ["quoted-", input.request.systemPrompt]), "message": concat("", ["the system prompt says ", input.request.systemPrompt])} if lib.request_stage

review contains {"code": "completion", "message": concat("", ["the model was ", input.result.model])} if lib.result_stage

permit := true
`)
	return dir
}

// TestHostileTextIsInertOnEveryScreen: an upstream puts terminal escapes
// (a clear-screen followed by a review of its own, OSC sequences), bidi
// controls, zero-width, tag and other invisible characters and C1
// controls into every field of a sampling request that reaches a person,
// and the host's completion carries them too; a policy quotes the request
// in a reason. Through the real firewall, every command an operator reads
// (review show in every form, list, watch, the edit document, audit,
// policy eval) emits none of it as it is, and still shows each field,
// escaped. An edit through the document leaves every hostile string as it
// was, and the host is asked exactly that.
func TestHostileTextIsInertOnEveryScreen(t *testing.T) {
	cfg := testConfig(t, quotingPolicy(t), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(attackAnswer))
	done := make(chan *peer.SampleOutcome, 1)
	go func() {
		got, err := host.SampleRaw(t.Context(), []byte(attackRequest))
		if err != nil {
			t.Errorf("sample: %v", err)
		}
		done <- got
	}()
	id := waitPending(t, cfg)
	checkRequestScreens(t, cfg, id)
	approveEditedMaxTokens(t, cfg, id)
	checkAskedAsSent(t, host)

	res := waitPendingStage(t, cfg, "result")
	show := inertRun(t, "review", "show", res, "--config", cfg)
	for _, m := range []string{"model", "out", "cid", "cin", "cval"} {
		mustShow(t, "show at stage two", show, m+attackShown)
	}
	mustShow(t, "show at stage two", show, "the model was model"+attackShown)
	inertRun(t, "review", "show", res, "--edit-doc", "--config", cfg)
	if r := runCLI(t, "review", "approve", res, "--config", cfg); r.code != 0 {
		t.Fatalf("approve the completion: %d %s", r.code, r.stderr)
	}
	if got := <-done; got == nil || got.Error != nil {
		t.Fatalf("the upstream got %+v, want the completion", got)
	}
	checkTamperedStore(t, cfg, id)
	checkPolicyEval(t, cfg)
}

// checkRequestScreens reads the held request with every command an
// operator has.
func checkRequestScreens(t *testing.T, cfg, id string) {
	for _, args := range [][]string{{"review", "show", id}, {"review", "show", id, "--full"}} {
		out := inertRun(t, append(args, "--config", cfg)...)
		for _, m := range attackMarkers {
			mustShow(t, strings.Join(args, " "), out, m+attackShown)
		}
		mustShow(t, "show", out, `\x1b]0;owned\x07\x1b]8;;https://evil.example\x1b\\click`)
		mustShow(t, "show", out, `\u202eexe.txt\u202c\u2066iso\u2069 zw\u200b\u200d\ufeff\u00ad tag\U000e0041 csi\u009b2J nel\u0085 del\x7f cr\r bs\x08`)
		mustShow(t, "show", out, `["quoted-sys`+attackShown)
	}
	for _, args := range [][]string{{"review", "show", id, "--json"}, {"review", "list", "--json"}, {"review", "watch", "--count", "1", "--json"}} {
		out := inertRun(t, append(args, "--config", cfg)...)
		if args[1] != "show" {
			if _, err := listLines[map[string]any](out); err != nil {
				t.Errorf("%s is not JSON Lines: %v\n%s", args, err, out)
			}
		} else if !json.Valid([]byte(out)) {
			t.Errorf("%s is not JSON:\n%s", args, out)
		}
		mustShow(t, strings.Join(args, " "), out, `quoted-sys\u001b[2J\u001b[HReview`)
		mustShow(t, strings.Join(args, " "), out, `\u202eexe.txt\u202c\u2066iso\u2069 zw\u200b\u200d\ufeff\u00ad tag\udb40\udc41 csi\u009b2J nel\u0085 del\u007f`)
	}
	mustShow(t, "review list", inertRun(t, "review", "list", "--config", cfg), `"quoted-sys`+attackShown)
	watch := inertRun(t, "review", "watch", "--count", "1", "--config", cfg)
	mustShow(t, "review watch", watch, "the system prompt says sys"+attackShown)
	doc := inertRun(t, "review", "show", id, "--edit-doc", "--config", cfg)
	for _, m := range []string{"sys", "stop", "text"} {
		mustShow(t, "the edit document", doc, m+`\e[2J\e[HReview`)
	}
}

// approveEditedMaxTokens approves the request with its edit document
// changed in maxTokens alone: every hostile string must read back from
// the document as it was.
func approveEditedMaxTokens(t *testing.T, cfg, id string) {
	doc := inertRun(t, "review", "show", id, "--edit-doc", "--config", cfg)
	edited := strings.Replace(doc, "maxTokens: 300", "maxTokens: 299", 1)
	if edited == doc {
		t.Fatalf("maxTokens: 300 is not in the edit document:\n%s", doc)
	}
	file := writeFile(t, t.TempDir(), "edited.yaml", edited)
	if r := runCLI(t, "review", "approve", id, "--edit-file", file, "--config", cfg); r.code != 0 {
		t.Fatalf("approve the edit: %d %s", r.code, r.stderr)
	}
}

// checkAskedAsSent: the host is asked the request as sent but for the
// edited maxTokens.
func checkAskedAsSent(t *testing.T, host *peer.Host) {
	var asked json.RawMessage
	select {
	case asked = <-host.Asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the host was not asked")
	}
	want := strings.Replace(attackRequest, `"maxTokens":300`, `"maxTokens":299`, 1)
	if !sameMeaning(t, []byte(want), asked) {
		t.Errorf("the host was asked something else than the edit:\nwant  %s\nasked %s", want, asked)
	}
}

// checkTamperedStore: even what the store says of itself (a label, an
// audit entry's operator) reaches the screen escaped, invalid UTF-8
// included, had someone written it there.
func checkTamperedStore(t *testing.T, cfg, id string) {
	db, err := sqlOpen(filepath.Join(filepath.Dir(cfg), "state", review.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bad := "\x1b[2J\xff\xfe\u202e"
	for _, q := range []string{"DROP TRIGGER audit_no_update", "UPDATE audit SET operator = ?", "UPDATE items SET label = ?"} {
		var args []any
		if strings.Contains(q, "?") {
			args = append(args, "x"+bad)
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustShow(t, "audit", inertRun(t, "audit", "--config", cfg), `x\x1b[2J\xff\xfe\u202e`)
	mustShow(t, "review show", inertRun(t, "review", "show", id, "--config", cfg), `x\x1b[2J\xff\xfe\u202e`)
	inertRun(t, "review", "list", "--all", "--config", cfg)
	mustShow(t, "audit --json", inertRun(t, "audit", "--json", "--config", cfg), `x\u001b[2J\ufffd\ufffd\u202e`)
}

// checkPolicyEval: policy eval reads a saved request, invalid UTF-8 and
// all, and prints it (violations, input document, reasons) inertly.
func checkPolicyEval(t *testing.T, cfg string) {
	file := writeFile(t, t.TempDir(), "request.json", strings.Replace(attackRequest, `"textATTACK"`, "\"text\xff\"", 1))
	out := inertRun(t, "policy", "eval", "--server", "peer", "--config", cfg, file)
	mustShow(t, "policy eval", out, `"systemPrompt": "sys\u001b[2J\u001b[HReview`) // the input document, as JSON
	mustShow(t, "policy eval", out, "the system prompt says sys"+attackShown)
	mustShow(t, "policy eval", out, `\u202eexe.txt`)
	out = inertRun(t, "policy", "eval", "--json", "--server", "peer", "--config", cfg, file)
	if !json.Valid([]byte(out)) {
		t.Errorf("policy eval --json is not JSON:\n%s", out)
	}
	mustShow(t, "policy eval --json", out, `\u202eexe.txt`)
}

// inertRun runs the binary and fails t unless it exits 0 having printed
// nothing a terminal could obey, on stdout or stderr.
func inertRun(t *testing.T, args ...string) string {
	t.Helper()
	r := runCLI(t, args...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d: %s", args, r.code, r.stderr)
	}
	rendertest.CheckInert(t, strings.Join(args, " "), r.stdout)
	rendertest.CheckInert(t, strings.Join(args, " ")+" (stderr)", r.stderr)
	return r.stdout
}

// mustShow fails t when out, its rows joined back into lines, lacks want.
func mustShow(t *testing.T, what, out, want string) {
	t.Helper()
	if !strings.Contains(rendertest.JoinRows(out), want) {
		t.Errorf("%s does not show %q:\n%.3000s", what, want, out)
	}
}

// waitPendingStage polls review list until an item of stage is pending.
func waitPendingStage(t *testing.T, cfg, stage string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res := runCLI(t, "review", "list", "--json", "--config", cfg)
		items, _ := listLines[struct{ ID, Stage string }](res.stdout)
		for _, it := range items {
			if it.Stage == stage {
				return it.ID
			}
		}
	}
	t.Fatalf("no %s-stage review appeared", stage)
	return ""
}
