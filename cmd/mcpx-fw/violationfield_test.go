package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// hostileField is a form field name an attacking upstream writes: a
// terminal's escapes (colour, window title, bell), line ends, a bidi
// override, a NUL, and 10 kB of it.
var hostileField = "age\x1b[31m\x1b]0;owned\x07\r\n\u202eFAKE LINE\x00" + strings.Repeat("\x1b[2J\n", 2000)

// hostileAnswer is an elicitation whose one field has hostileField's name
// and an answer that breaks the field's maximum, as request and result.
func hostileAnswer(t *testing.T) (request, result string) {
	t.Helper()
	name, err := json.Marshal(hostileField)
	if err != nil {
		t.Fatal(err)
	}
	request = `{"mode":"form","message":"How old are you?","requestedSchema":{"type":"object","properties":{` +
		string(name) + `:{"type":"integer","maximum":120}}}}`
	return request, `{"action":"accept","content":{` + string(name) + `:987654321}}`
}

// inertOutput reports what in out a terminal could obey or that could
// pass for a line of mcpx-fw's own.
func inertOutput(t *testing.T, what, out string, lines int) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' }); i >= 0 {
		t.Errorf("%s: a raw control character at byte %d: %q", what, i, out[max(0, i-20):min(len(out), i+20)])
	}
	if strings.Contains(out, "\nFAKE LINE") || strings.Count(out, "\n") > lines {
		t.Errorf("%s: the field name broke a line:\n%s", what, out)
	}
	if strings.Count(out, "[2J") > 64/len("\x1b[2J\n") {
		t.Errorf("%s: more of the 10 kB name than a path's 64-byte step holds", what)
	}
}

// unwrapped is out with the rows the terminal layout wrapped joined again.
func unwrapped(out string) string { return wrapMark.ReplaceAllString(out, "") }

var wrapMark = regexp.MustCompile("\n *\u2506 ")

// TestFieldNameReachesTheTerminalInertly: a form's field name names the
// violation of its answer in policy eval and in review show of the
// blocker's decision, escaped, on its line, and cut short; the user's
// value is in neither.
func TestFieldNameReachesTheTerminalInertly(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	request, result := hostileAnswer(t)
	pair := filepath.Join(t.TempDir(), "pair.json")
	if err := os.WriteFile(pair, []byte(`{"kind":"elicitation","request":`+request+`,"result":`+result+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eval := runCLI(t, "policy", "eval", "--server", "peer", "--config", cfg, pair)
	violation := ""
	for line := range strings.Lines(unwrapped(eval.stdout)) {
		if strings.HasPrefix(line, "  ELI-25.constraint at /content/age") {
			violation = line
		}
	}
	if violation == "" || !strings.Contains(violation, "the value is above maximum 120") {
		t.Errorf("policy eval names no violation of field age:\n%s", eval.stdout)
	}
	inertOutput(t, "policy eval's violation", violation, 1)

	e, err := engine.New(t.Context(), engine.Config{Policy: engine.PolicyConfig{Dir: repoPath(t, "policies")}, ReviewTimeout: time.Minute},
		openStore(t, cfg), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	s := engine.Request{Kind: engine.KindElicitation, Server: engine.Server{Name: "peer", Era: "2025-11-25"},
		Host: engine.Host{Era: "2025-11-25", Capabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}}
	s.Caps.Form, s.Params = true, []byte(request)
	v := e.Check(t.Context(), s, []byte(result))
	if v.Outcome != engine.OutcomeBlocker {
		t.Fatalf("answer: %v %v", v.Outcome, v.ReasonCodes())
	}
	show := runCLI(t, "review", "show", v.DecisionID, "--config", cfg)
	if show.code == 0 || !strings.Contains(show.stderr, "ELI-25.constraint: /content/age") || !strings.Contains(show.stderr, "above maximum 120") {
		t.Errorf("review show %s: exit %d, names no field:\n%s", v.DecisionID, show.code, show.stderr)
	}
	inertOutput(t, "review show of the blocker", unwrapped(show.stderr), 1)
	for _, out := range []string{violation, show.stderr} {
		if strings.Contains(out, "987654321") {
			t.Errorf("the user's value is shown:\n%s", out)
		}
	}
}
