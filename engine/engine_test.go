package engine

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	_ "modernc.org/sqlite" // the "sqlite" driver, to lock the queue from outside

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// fixtureData is data.mcpxfw.config for the golden inputs and the engine
// tests: the same file `opa eval -d testdata/inputs/data` loads.
func fixtureData(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../testdata/inputs/data/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mcpxfw struct {
			Config map[string]any `json:"config"`
		} `json:"mcpxfw"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Mcpxfw.Config
}

// newTestEngine starts an engine on cfg (the shipped policies and the
// fixture configuration unless cfg says otherwise) with a fresh store.
func newTestEngine(t testing.TB, cfg Config) (*Engine, *review.Store) {
	t.Helper()
	if cfg.Policy.Dir == "" && cfg.Policy.FS == nil {
		cfg.Policy.Dir = shippedPolicies
	}
	if cfg.Policy.Data == nil {
		cfg.Policy.Data = fixtureData(t)
	}
	if cfg.ReviewTimeout == 0 {
		cfg.ReviewTimeout = time.Minute
	}
	log := zaptest.NewLogger(t)
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, err := New(t.Context(), cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close) // before the store closes
	return e, store
}

// sampling is a request from server in the 2025-11-25 era, from a host
// that declared sampling with tools.
func sampling(server, params string) Request {
	return Request{
		Server: Server{Name: server, Label: server, Era: "2025-11-25"},
		Host:   Host{Era: "2025-11-25", Capabilities: map[string]any{"sampling": map[string]any{"tools": map[string]any{}}}},
		Caps:   validate.Capabilities{Tools: true},
		Params: []byte(params),
	}
}

// textParams is a one-message text request asking for maxTokens.
func textParams(text string, maxTokens int) string {
	msg, _ := json.Marshal(text)
	return `{"messages":[{"role":"user","content":{"type":"text","text":` + string(msg) + `}}],"maxTokens":` + itoa(maxTokens) + `}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

const toolParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":50,
	"tools":[{"name":"search","inputSchema":{"type":"object"}}]}`

func TestDecideOutcomes(t *testing.T) {
	e, store := newTestEngine(t, Config{})
	broken, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: "../testdata/policies/broken-runtime"}})
	tests := []struct {
		name   string
		e      *Engine
		s      Request
		want   Outcome
		codes  []string
		review bool
	}{
		{"permitted", e, sampling("everything", textParams("Hello", 100)), OutcomePass, []string{}, false},
		{"held for a person", e, sampling("everything", textParams("Hello", 2000)), OutcomeEscalate, []string{"long"}, true},
		{"denied", e, sampling("everything", toolParams), OutcomeBlocker, []string{"no-tools"}, false},
		{"invalid", e, sampling("everything", `{"messages":[],"maxTokens":1}`), OutcomeBlocker, []string{"SMP-01.messages"}, false},
		{"policy broken", broken, sampling("everything", textParams("Hello", 100)), OutcomeError, []string{"policy-error"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.e.Decide(t.Context(), tt.s)
			if v.Outcome != tt.want || strings.Join(v.ReasonCodes(), ",") != strings.Join(tt.codes, ",") {
				t.Errorf("got %v %v (%v), want %v %v", v.Outcome, v.ReasonCodes(), v.Err, tt.want, tt.codes)
			}
			if (v.ReviewID != "") != tt.review {
				t.Errorf("review id %q, want one: %v", v.ReviewID, tt.review)
			}
			if tt.e == e {
				if d, err := store.Decision(t.Context(), v.DecisionID); err != nil || d.ReviewID != v.ReviewID {
					t.Errorf("recorded %+v, %v", d, err)
				}
			}
		})
	}
}

// The result stage is a review point of its own: a policy may withhold the
// completion (a blocker at stage result, -1 on the wire) or hold it for a
// person, and the tokens it cost are charged either way.
func TestCheckJudgesTheCompletion(t *testing.T) {
	e, store := newTestEngine(t, Config{})
	s := sampling("github-mcp", textParams("Review this diff", 500))
	tests := []struct {
		name, result string
		want         Outcome
		code         string
	}{
		{"clean", `{"role":"assistant","model":"m","content":{"type":"text","text":"LGTM"}}`, OutcomePass, ""},
		{"secret", `{"role":"assistant","model":"m","content":{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}}`, OutcomeEscalate, "secret-in-completion"},
		{"image", `{"role":"assistant","model":"m","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}`, OutcomeBlocker, "media-completion"},
		{"invalid", `{"role":"user","model":"m","content":{"type":"text","text":"hi"}}`, OutcomeBlocker, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := e.Check(t.Context(), s, []byte(tt.result))
			if v.Outcome != tt.want || v.Stage != StageResult || (tt.code != "" && v.ReasonCodes()[0] != tt.code) {
				t.Errorf("got %v %v at %s, want %v %s", v.Outcome, v.ReasonCodes(), v.Stage, tt.want, tt.code)
			}
			if (v.ReviewID != "") != (tt.want == OutcomeEscalate) {
				t.Errorf("review id %q for %v", v.ReviewID, v.Outcome)
			}
			if (len(v.Violations) > 0) != (tt.name == "invalid") {
				t.Errorf("violations %v", v.Violations)
			}
		})
	}
	if u := usageOf(t, store, "github-mcp"); u.ReturnedTokens == 0 || u.Requests != 0 {
		t.Errorf("usage %+v: completions are charged, and do not count as requests", u)
	}
}

// TestUnrecordedPassFailsClosed: a pass the store cannot record (its usage
// uncounted, its decision unfindable) is an error, not a pass. Another
// process holds the queue's write lock past the busy timeout; reading
// usage still works, so only the record fails.
func TestUnrecordedPassFailsClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	store, err := review.Open(dir, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, err := New(t.Context(), Config{Policy: PolicyConfig{Dir: shippedPolicies, Data: fixtureData(t)}, ReviewTimeout: time.Minute}, store, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := sampling("github-mcp", textParams("Summarise the pull request.", 100))
	if v := e.Decide(t.Context(), s); v.Outcome != OutcomePass {
		t.Fatalf("with the queue writable: %s, want pass", v.Outcome)
	}
	other, err := sql.Open("sqlite", filepath.Join(dir, review.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("CREATE TABLE lock_probe (x)"); err != nil { // takes the write lock until rolled back
		t.Fatal(err)
	}
	if v := e.Decide(t.Context(), s); v.Outcome != OutcomeError || !slices.Contains(v.ReasonCodes(), "store-error") {
		t.Fatalf("with the queue locked: %s %v, want error store-error", v.Outcome, v.ReasonCodes())
	}
}
