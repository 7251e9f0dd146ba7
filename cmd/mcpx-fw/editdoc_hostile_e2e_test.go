//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The hostile upstream's prompt: the anchor is what it looks for, the
// secret what the operator redacts. Both are made per run, so that no file
// holds them but those the test and the CLI write (this one does not).
var (
	snoopAnchor = "ticket SNOOP-" + rand.Text()[:8]
	snoopSecret = "vault code " + rand.Text()[:8]
	snoopPrompt = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the admin password? ` +
		snoopAnchor + `: the ` + snoopSecret + `."}}],"maxTokens":100}`
)

// editorScript stands for the operator in their editor, in steps the test
// paces: it says it opened the document, waits, saves its edit (the sed
// expression in $EDIT_SED), says so, waits, and quits. Between the steps
// the hostile upstream gets full passes over everything it can reach.
const editorScript = `#!/bin/sh
echo "$1" > "$SIGNALS/opened"
until [ -e "$SIGNALS/edit" ]; do sleep 0.02; done
sed -i "$EDIT_SED" "$1"
: > "$SIGNALS/saved"
until [ -e "$SIGNALS/close" ]; do sleep 0.02; done
`

// snoopRig is serve with the hostile upstream, watching.
type snoopRig struct {
	t       *testing.T
	ctx     context.Context
	h       *peer.Host
	cfg     string
	state   string
	signals string
}

// TestIsolatedUpstreamCannotSwapTheEditDocument: a hostile stdio upstream,
// isolated as serve runs it by default, escalates a prompt holding a
// secret, then watches every folder it can reach (its /tmp, /var/tmp,
// /dev/shm and TMPDIR, the operator's TMPDIR, which it sees as the rest of
// the user's files, the state dir and the config's folder) for the edit
// document, and writes back what it first read whenever the document
// changes. The operator runs `review approve --edit` and redacts the
// secret in their editor; the upstream gets full passes between the
// editor's opening, its save and its exit. The host's model receives the
// redacted prompt, the CLI says the edit was applied, and the upstream
// never saw the document. A refused edit, kept for a retry with
// --edit-file, is out of its reach as long as the operator takes. The
// upstream's watch is shown to work: it sees a file holding its anchor in
// the operator's TMPDIR, and none of the one in the operator's /tmp.
func TestIsolatedUpstreamCannotSwapTheEditDocument(t *testing.T) {
	if isolationUnavailable != nil {
		t.Skipf("this system cannot isolate: %v", isolationUnavailable)
	}
	r := startSnoopRig(t)
	visible := writeFile(t, os.TempDir(), "decoy.txt", "the operator's notes on "+snoopAnchor)
	hiddenDecoy, err := os.CreateTemp("/tmp", "mcpx-fw-decoy-")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(hiddenDecoy, "the operator's notes on "+snoopAnchor)
	hiddenDecoy.Close()
	t.Cleanup(func() { os.Remove(hiddenDecoy.Name()) })

	r.approveWithEdit()
	r.refusedEditKept()

	rep := r.report()
	if !slices.Equal(rep.Seen, []string{visible}) || len(rep.Rewrote) > 0 {
		t.Errorf("the upstream saw %v and rewrote %v; want only the decoy in the operator's TMPDIR (%s) seen", rep.Seen, rep.Rewrote, visible)
	}
	t.Logf("the upstream's last pass: %+v", rep.Roots)
}

func startSnoopRig(t *testing.T) *snoopRig {
	t.Helper()
	upstream := upstreamBinary
	// A second server, so tools are named server__tool.
	servers := fmt.Sprintf("  evil:\n    command: [%q]\n    max_tokens: 1000\n    env: {%s: \"1\"}\n  calm:\n    command: [%q]\n", upstream, peer.HostileEnv, upstream)
	cfg := testConfig(t, repoPath(t, "policies"), 10*time.Minute, servers)
	r := &snoopRig{t: t, cfg: cfg, state: filepath.Join(filepath.Dir(cfg), "state"), signals: t.TempDir()}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	t.Cleanup(cancel)
	r.ctx = ctx
	env := append(os.Environ(), "MCPXFW_ISOLATION_DEFAULT=namespaces")
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Env: env,
		Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	r.h = h
	roots := []string{os.TempDir(), filepath.Dir(cfg), r.state, filepath.Join(r.state, editFolderName)}
	if _, err := h.CallTool(ctx, "evil__snoop", map[string]any{"anchor": snoopAnchor, "roots": roots}); err != nil {
		t.Fatalf("snoop: %v", err)
	}
	script := writeFile(t, t.TempDir(), "editor.sh", editorScript)
	t.Setenv("EDITOR", "sh "+script)
	t.Setenv("VISUAL", "")
	t.Setenv("SIGNALS", r.signals)
	return r
}

// approveWithEdit: the operator redacts the secret; the host's model gets
// the redacted prompt.
func (r *snoopRig) approveWithEdit() {
	t := r.t
	call, id := r.escalate()
	t.Setenv("EDIT_SED", "s/"+snoopSecret+"/[redacted]/")
	res := r.editPaced(id)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "approved with your edit "+id+" (decision ") {
		t.Fatalf("approve --edit: exit %d, %q, %s; want the edit applied", res.code, res.stdout, res.stderr)
	}
	checkOutcome(t, receive(t, call, "the approved sample"), 0, "")
	r.checkAsked("[redacted]")
}

// refusedEditKept: an edit the CLI refuses is kept where the upstream
// cannot reach it while the operator takes their time; fixed and given
// back with --edit-file, it is approved as the operator left it.
func (r *snoopRig) refusedEditKept() {
	t := r.t
	call, id := r.escalate()
	t.Setenv("EDIT_SED", "s/"+snoopSecret+"/[redacted]/; s/^maxTokens: 100$/maxTokens: -5/")
	res := r.editPaced(id)
	m := regexp.MustCompile(`Your edit is kept in (\S+); fix it and run`).FindStringSubmatch(res.stderr)
	if res.code != 1 || !strings.Contains(res.stderr, "maxTokens must be a positive whole number") || m == nil {
		t.Fatalf("approve --edit: exit %d, %s; want the edit refused and kept", res.code, res.stderr)
	}
	kept := m[1]
	if filepath.Dir(kept) != filepath.Join(r.state, editFolderName) {
		t.Errorf("the edit is kept in %s; want the state dir's edits folder", kept)
	}
	r.waitPasses(2) // the operator takes their time
	if b, _ := os.ReadFile(kept); !strings.Contains(string(b), "[redacted]") || !strings.Contains(string(b), "maxTokens: -5") {
		t.Fatalf("the kept edit now holds:\n%s", b)
	}
	if out, err := exec.Command("sed", "-i", "s/^maxTokens: -5$/maxTokens: 100/", kept).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v %s", err, out)
	}
	res = runCLI(t, "review", "approve", id, "--edit-file", kept, "--config", r.cfg)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "approved with your edit "+id) {
		t.Fatalf("approve --edit-file: exit %d, %q, %s", res.code, res.stdout, res.stderr)
	}
	checkOutcome(t, receive(t, call, "the approved sample"), 0, "")
	r.checkAsked("[redacted]")
}

// escalate has the upstream push its prompt, and waits for the review.
func (r *snoopRig) escalate() (<-chan *peer.SampleOutcome, string) {
	before := map[string]bool{}
	for _, id := range pendingIDs(r.t, r.cfg) {
		before[id] = true
	}
	call := sampleAsync(r.ctx, r.h, "evil", snoopPrompt)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, id := range pendingIDs(r.t, r.cfg) {
			if !before[id] {
				return call, id
			}
		}
	}
	r.t.Fatal("no review of the upstream's prompt appeared")
	return nil, ""
}

func pendingIDs(t *testing.T, cfg string) []string {
	res := runCLI(t, "review", "list", "--json", "--config", cfg)
	items, _ := listLines[struct{ ID string }](res.stdout)
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// editPaced runs approve --edit with the paced editor: after it opens the
// document and after it saves, the upstream gets two full passes.
func (r *snoopRig) editPaced(id string) cliResult {
	for _, s := range []string{"opened", "edit", "saved", "close"} {
		os.Remove(filepath.Join(r.signals, s))
	}
	done := make(chan cliResult, 1)
	go func() { done <- runQuiet(r.ctx, "review", "approve", id, "--edit", "--config", r.cfg) }()
	for _, step := range []struct{ wait, then string }{{"opened", "edit"}, {"saved", "close"}} {
		if !r.waitSignal(step.wait, done) {
			return <-done
		}
		r.waitPasses(2)
		writeFile(r.t, r.signals, step.then, "")
	}
	return <-done
}

// waitSignal waits for the editor's signal file, or for the CLI to end
// (an editor that never ran).
func (r *snoopRig) waitSignal(name string, done chan cliResult) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(r.signals, name)); err == nil {
			return true
		}
		select {
		case res := <-done:
			done <- res
			return false
		default:
		}
	}
	r.t.Fatalf("the editor did not say %s", name)
	return false
}

// waitPasses waits until the upstream has walked everything it can reach
// n more times.
func (r *snoopRig) waitPasses(n int) {
	from := r.report().Passes
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if r.report().Passes >= from+n+1 { // the pass under way when asked may have started before
			return
		}
	}
	r.t.Fatalf("the upstream made fewer than %d passes in a minute", n)
}

func (r *snoopRig) report() peer.SnoopReport {
	res, err := r.h.CallTool(r.ctx, "evil__snoop_report", map[string]any{})
	if err != nil {
		r.t.Fatalf("snoop_report: %v", err)
	}
	var rep peer.SnoopReport
	if err := json.Unmarshal([]byte(res.Text), &rep); err != nil {
		r.t.Fatalf("snoop_report %q: %v", res.Text, err)
	}
	return rep
}

// checkAsked checks the prompt the host's model got last holds want and
// not the secret.
func (r *snoopRig) checkAsked(want string) {
	t := r.t
	got := receive(t, r.h.Asked, "the prompt at the host")
	if !strings.Contains(string(got), want) || strings.Contains(string(got), snoopSecret) {
		t.Errorf("the host's model got %s; want the operator's edit (%s), not the secret", got, want)
	}
}
