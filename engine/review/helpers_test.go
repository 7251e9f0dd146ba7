package review

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"
)

// stateDir is a path Open will create: t.TempDir itself is 0755, which
// Open refuses.
func stateDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state")
}

// openStore opens a Store on dir, in the pass's backend (backend_test.go),
// that polls fast and closes with the test. On PostgreSQL it runs no
// listener and no heartbeat (quiet), so it also works on fake time in a
// synctest bubble; openReplica opens one that runs both.
func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := openBackend(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	s.PollInterval = 10 * time.Millisecond
	t.Cleanup(func() { s.Close() })
	quiet(t, s)
	return s
}

// sampleItem is a request-stage escalation as the engine would open it.
func sampleItem(server string) Item {
	return Item{
		DecisionID: "dc-0001",
		Server:     server,
		Label:      server + " label",
		Stage:      StageRequest,
		Era:        "2025-11-25",
		Reasons:    []Reason{{Code: "needs_review", Message: "the policy asks a person"}},
		Request:    json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":64}`),
		Context:    json.RawMessage(`{"era":"2025-11-25","host":{"sampling":{}}}`),
	}
}

func mustAdd(t *testing.T, s *Store, it Item, timeout time.Duration) Item {
	t.Helper()
	got, err := s.Add(t.Context(), it, timeout)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return got
}

func mustGet(t *testing.T, s *Store, id string) Item {
	t.Helper()
	got, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got
}

// inBubble runs f in a synctest bubble with a Store opened inside it, so
// deadlines and polls run on fake time and no test sleeps.
func inBubble(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	dir := stateDir(t)
	synctest.Test(t, func(t *testing.T) {
		f(t, openStore(t, dir))
	})
}
