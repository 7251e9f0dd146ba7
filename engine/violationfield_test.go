package engine

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// hostileField is a form field name an attacking upstream writes: a
// terminal's escapes (colour, window title, bell), line ends, a bidi
// override, a NUL and 10 kB of it.
var hostileField = "age\x1b[31m\x1b]0;owned\x07\r\n\u202eFAKE LINE\x00" + strings.Repeat("\x1b[2J\n", 2000)

// Words the user and the host wrote: never in either log.
const (
	answerValue = 987654321
	strayMember = "HOST-WROTE-THIS-MEMBER"
)

// answerLogs checks a form answer that breaks the hostile field's maximum
// and carries a member the form did not ask for, and returns the masked
// decision log's line for it and the service log's.
func answerLogs(t *testing.T) (decision, service []byte) {
	t.Helper()
	var dlog, slog bytes.Buffer
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	log := zap.New(zapcore.NewCore(enc, zapcore.AddSync(&slog), zapcore.InfoLevel))
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, err := New(t.Context(), Config{DecisionLog: &dlog, Policy: PolicyConfig{Dir: shippedPolicies, Data: fixtureData(t)}, ReviewTimeout: time.Minute}, store, log)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := json.Marshal(hostileField)
	params := `{"mode":"form","message":"How old are you?","requestedSchema":{"type":"object","properties":{` +
		string(name) + `:{"type":"integer","maximum":120}}}}`
	result := `{"action":"accept","content":{` + string(name) + `:` + itoa(answerValue) + `,"` + strayMember + `":1}}`
	v := e.Check(t.Context(), kindRequest(KindElicitation, "notes", params), []byte(result))
	if v.Outcome != OutcomeBlocker || len(v.Violations) != 2 {
		t.Fatalf("answer: %v %v, want a blocker with two violations", v.Outcome, v.Violations)
	}
	return dlog.Bytes(), slog.Bytes()
}

// TestViolationNamesTheFormFieldInertly: the violation of a form's answer
// names the field in the decision log and the service log (the field's
// name is the server's schema), while the user's value and a member name
// the host wrote stay out of both; the name an attacking upstream wrote
// arrives there JSON-escaped, on one line, and cut to what a path holds.
func TestViolationNamesTheFormFieldInertly(t *testing.T) {
	decision, service := answerLogs(t)
	want := "/content/" + validate.PathStep(hostileField)
	if len(want) > 80 {
		t.Fatalf("the path is %d bytes: not bounded", len(want))
	}
	for name, line := range map[string][]byte{"decision log": decision, "service log": service} {
		for _, l := range bytes.Split(bytes.TrimSuffix(line, []byte("\n")), []byte("\n")) {
			if i := bytes.IndexFunc(l, func(r rune) bool { return r < 0x20 }); i >= 0 {
				t.Errorf("%s: a raw control character at byte %d: %q", name, i, l[max(0, i-20):min(len(l), i+20)])
			}
		}
		for _, leak := range []string{itoa(answerValue), strayMember} {
			if bytes.Contains(line, []byte(leak)) {
				t.Errorf("%s shows %q", name, leak)
			}
		}
		if n := bytes.Count(line, []byte("[2J")); n > 64/len("\x1b[2J\n") {
			t.Errorf("%s holds %d of the name's repeats, more than a 64-byte step holds", name, n)
		}
	}
	var ev struct {
		Result struct{ Violations []validate.Violation }
	}
	if err := json.Unmarshal(decision, &ev); err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(ev.Result.Violations); !strings.Contains(got, want) || strings.Contains(got, strayMember) {
		t.Errorf("decision log violations at %q, want the field's path %q and the stray member's digested", got, want)
	}
	if !strings.Contains(serviceViolations(t, service), "ELI-25.constraint at "+want) {
		t.Errorf("service log names no violation at %q:\n%s", want, service)
	}
}

func pathsOf(vs []validate.Violation) string {
	var paths []string
	for _, vi := range vs {
		paths = append(paths, vi.Path)
	}
	return strings.Join(paths, " ")
}

// serviceViolations is the violations field of the service log's decision
// line.
func serviceViolations(t *testing.T, service []byte) string {
	t.Helper()
	for line := range bytes.Lines(service) {
		var entry struct {
			Msg        string   `json:"msg"`
			Violations []string `json:"violations"`
		}
		if json.Unmarshal(line, &entry) == nil && entry.Msg == "decision" {
			return strings.Join(entry.Violations, "; ")
		}
	}
	t.Fatalf("no decision line in the service log:\n%s", service)
	return ""
}
