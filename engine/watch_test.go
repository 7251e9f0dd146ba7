package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// reloadEvent is one reload attempt as the watcher reports it.
type reloadEvent struct {
	revision string
	err      error
}

// watchedEngine runs an engine on a copy of the shipped policies with the
// watcher started, and returns the copy's path, the reload events and the
// engine's log.
func watchedEngine(t *testing.T) (*Engine, string, <-chan reloadEvent, *observer.ObservedLogs) {
	t.Helper()
	dir := copyPolicyDir(t, shippedPolicies)
	core, logs := observer.New(zap.InfoLevel)
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, err := New(t.Context(), Config{Policy: PolicyConfig{Dir: dir, Data: fixtureData(t)}, ReviewTimeout: time.Minute}, store, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	return e, dir, watching(t, e, e), logs
}

// watching hears the reloads of hooked (an engine, or its shadow's) on
// the channel it returns, and starts watched's watcher, stopped with the
// test.
func watching(t *testing.T, watched, hooked *Engine) <-chan reloadEvent {
	t.Helper()
	events := make(chan reloadEvent, 16)
	hooked.reloaded = func(rev string, err error) {
		select { // never blocks the watcher past the test, so stop returns
		case events <- reloadEvent{rev, err}:
		case <-t.Context().Done():
		}
	}
	stop, err := watched.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return events
}

// awaitReload waits for a reload attempt that satisfies ok, skipping
// intermediate ones (an editor's save may arrive as two bursts).
func awaitReload(t *testing.T, events <-chan reloadEvent, ok func(reloadEvent) bool) reloadEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatal("no matching policy reload within 10s")
		}
	}
}

func decideCodes(t *testing.T, e *Engine, server string) string {
	t.Helper()
	v := e.Decide(t.Context(), sampling(server, textParams("Hello", 100)))
	return v.Outcome.String() + " " + strings.Join(v.ReasonCodes(), ",")
}

const frozenEverything = `package mcpxfw.servers.everything

deny contains {"code": "frozen", "message": "everything is frozen"}
`

func TestWatchReloadsEdits(t *testing.T) {
	e, dir, events, logs := watchedEngine(t)
	if got := decideCodes(t, e, "everything"); got != "pass " {
		t.Fatalf("before the edit: %s", got)
	}
	first := e.Revision()

	writePolicyFile(t, filepath.Join(dir, "servers", "everything.rego"), frozenEverything)
	ev := awaitReload(t, events, func(ev reloadEvent) bool { return ev.err == nil && ev.revision != first })
	if got := decideCodes(t, e, "everything"); got != "blocker frozen" {
		t.Errorf("after the edit: %s", got)
	}
	if e.Revision() != ev.revision {
		t.Errorf("engine revision %s, reloaded %s", e.Revision(), ev.revision)
	}
	if n := logs.FilterMessage("policy reloaded").FilterField(zap.String("revision", ev.revision)).Len(); n != 1 {
		t.Errorf("%d reload log lines naming revision %s, want 1", n, ev.revision)
	}
}

func TestWatchKeepsOldPolicyOnSyntaxError(t *testing.T) {
	e, dir, events, logs := watchedEngine(t)
	good := e.Revision()
	writePolicyFile(t, filepath.Join(dir, "servers", "everything.rego"), "package mcpxfw.servers.everything\n\ndeny contains {\n")
	awaitReload(t, events, func(ev reloadEvent) bool { return ev.err != nil })
	if got := decideCodes(t, e, "everything"); got != "pass " || e.Revision() != good {
		t.Errorf("after a broken edit: %s at revision %s, want pass at %s", got, e.Revision(), good)
	}
	failures := logs.FilterMessage("policy reload failed; the previous policy keeps deciding")
	if failures.Len() != 1 {
		t.Fatalf("%d failure log lines, want 1", failures.Len())
	}
	fields := failures.All()[0].ContextMap()
	if fields["revision"] != good || !strings.Contains(fields["error"].(string), "everything.rego:") {
		t.Errorf("failure logged with %v; want the serving revision and the file:line", fields)
	}
}

func TestWatchSeesNewSubdirectory(t *testing.T) {
	e, dir, events, _ := watchedEngine(t)
	if got := decideCodes(t, e, "notes"); got != "pass " {
		t.Fatalf("before: %s", got)
	}
	first := e.Revision()
	sub := filepath.Join(dir, "servers", "team")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	awaitReload(t, events, func(reloadEvent) bool { return true }) // the folder alone
	writePolicyFile(t, filepath.Join(sub, "notes.rego"), strings.ReplaceAll(frozenEverything, "everything", "notes"))
	awaitReload(t, events, func(ev reloadEvent) bool { return ev.err == nil && ev.revision != first })
	if got := decideCodes(t, e, "notes"); got != "blocker frozen" {
		t.Errorf("after adding servers/team/notes.rego: %s", got)
	}
}

func TestWatchSeesPolicyDirRemovedAndRestored(t *testing.T) {
	e, dir, events, _ := watchedEngine(t)
	first := e.Revision()
	replacement := copyPolicyDir(t, shippedPolicies)
	writePolicyFile(t, filepath.Join(replacement, "servers", "everything.rego"), frozenEverything)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	awaitReload(t, events, func(ev reloadEvent) bool { return ev.err != nil })
	if got := decideCodes(t, e, "everything"); got != "pass " || e.Revision() != first {
		t.Fatalf("with the policy dir gone: %s at %s, want the old policy deciding", got, e.Revision())
	}
	// A new copy renamed into place: a directory the watcher has never seen.
	if err := os.Rename(replacement, dir); err != nil {
		t.Fatal(err)
	}
	awaitReload(t, events, func(ev reloadEvent) bool { return ev.err == nil && ev.revision != first })
	if got := decideCodes(t, e, "everything"); got != "blocker frozen" {
		t.Fatalf("after the policy dir came back edited: %s", got)
	}
	// The restored tree is watched again: a later edit is seen.
	if err := os.Remove(filepath.Join(dir, "servers", "everything.rego")); err != nil {
		t.Fatal(err)
	}
	awaitReload(t, events, func(ev reloadEvent) bool { return ev.err == nil })
	if got := decideCodes(t, e, "everything"); got == "blocker frozen" {
		t.Fatalf("an edit after the restore was not seen: %s", got)
	}
}

func TestWatchIgnoresSiblings(t *testing.T) {
	_, dir, events, _ := watchedEngine(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "unrelated.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		t.Fatalf("a file beside the policy dir caused a reload: %+v", ev)
	case <-time.After(10 * reloadDebounce):
	}
}

func TestUnderRoot(t *testing.T) {
	root := filepath.Join("a", "policies")
	for name, want := range map[string]bool{
		root:                                     true,
		filepath.Join(root, "servers", "x.rego"): true,
		root + "/":                               true,
		filepath.Join("a", "policies.old"):       false,
		filepath.Join("a", "policiesx", "y"):     false,
		"a":                                      false,
	} {
		if got := underRoot(root, name); got != want {
			t.Errorf("underRoot(%q, %q) = %v, want %v", root, name, got, want)
		}
	}
}
