package engine

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/logship"
	"github.com/mcpx-fw/mcpx-fw/engine/logship/collector"
	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// shadowSaysNo, added to a copy of permit-all, denies everything: a
// candidate stricter than the active policy in every cell.
const shadowSaysNo = `package mcpxfw.global

deny contains {"code": "shadow-says-no", "message": "the candidate refuses"}
`

// denyingShadow is a policy folder that denies every request and result.
func denyingShadow(t *testing.T) string {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "global.rego"), shadowSaysNo)
	return dir
}

// shadowEngine is an engine on permit-all with shadow as its shadow
// policy, logging decisions to the returned buffer (read it after
// e.Close).
func shadowEngine(t *testing.T, shadow PolicyConfig, m *telemetry.Metrics) (*Engine, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	if shadow.Data == nil {
		shadow.Data = kindsData(t)
	}
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: "../testdata/policies/permit-all", Data: kindsData(t)},
		Shadow: &shadow, DecisionLog: &buf, Metrics: m})
	t.Cleanup(e.Close)
	return e, &buf
}

// loggedShadows are the log's events by decision id: the result's outcome
// and the custom shadow object.
func loggedShadows(t *testing.T, buf *bytes.Buffer) map[string]loggedShadow {
	t.Helper()
	out := map[string]loggedShadow{}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var ev struct {
			DecisionID string `json:"decision_id"`
			Result     struct {
				Outcome string `json:"outcome"`
			} `json:"result"`
			Custom struct {
				Shadow loggedShadowCustom `json:"shadow"`
			} `json:"custom"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("decision log line %s: %v", line, err)
		}
		out[ev.DecisionID] = loggedShadow{active: ev.Result.Outcome, shadow: ev.Custom.Shadow}
	}
	return out
}

type loggedShadow struct {
	active string
	shadow loggedShadowCustom
}

type loggedShadowCustom struct {
	Revision string `json:"revision"`
	Outcome  string `json:"outcome"`
	Reasons  []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"reasons"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Skipped string `json:"skipped"`
}

func (c loggedShadowCustom) codes() string {
	var out []string
	for _, r := range c.Reasons {
		out = append(out, r.Code)
	}
	return strings.Join(out, ",")
}

// A shadow that denies what the active policy permits changes nothing at
// any decision point (Decide, Check, Reconsider; sampling, form and URL
// elicitation, roots): the verdicts are the active policy's, nothing is
// held for it, and the log, the metrics and the status carry the
// shadow's outcome. A validation blocker is reported as not evaluated.
func TestShadowIsRecordedNeverEnforced(t *testing.T) {
	m := telemetry.New(telemetry.Options{Servers: []string{"everything", "notes"}, Shadow: true})
	e, buf := shadowEngine(t, PolicyConfig{Dir: denyingShadow(t)}, m)
	ctx := t.Context()
	s := sampling("everything", textParams("Hello", 100))
	held := s
	held.AwaitAnswer = true // escalates (an operator's answer), to be approved
	first := e.Decide(ctx, held)
	verdicts := []Verdict{
		e.Decide(ctx, s),
		e.Check(ctx, s, []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"hi"},"stopReason":"endTurn"}`)),
		first,
		e.Reconsider(ctx, held, nil, Approval{DecisionID: first.DecisionID, By: "op", At: time.Now()}),
		e.Decide(ctx, kindRequest(KindElicitation, "everything", form("name", "Name", "Who are you?"))),
		e.Decide(ctx, kindRequest(KindElicitation, "everything", urlElicitation("https://example.com/auth"))),
		e.Decide(ctx, kindRequest(KindRoots, "notes", "")),
	}
	invalid := e.Decide(ctx, sampling("everything", `{"messages":[],"maxTokens":1}`))
	for i, v := range verdicts {
		want := OutcomePass
		if v.DecisionID == first.DecisionID {
			want = OutcomeEscalate
		}
		if v.Outcome != want || (v.ReviewID != "") != (want == OutcomeEscalate) {
			t.Errorf("decision %d: %v %v review %q (%v), want %v: the shadow's deny must not decide", i, v.Outcome, v.ReasonCodes(), v.ReviewID, v.Err, want)
		}
	}
	rev := e.ShadowRevision()
	if rev == "" || rev == e.Revision() {
		t.Fatalf("shadow revision %q beside active %q", rev, e.Revision())
	}
	e.Close()
	logged := loggedShadows(t, buf)
	for i, v := range verdicts {
		l, ok := logged[v.DecisionID]
		switch {
		case !ok:
			t.Errorf("decision %d: no log line", i)
		case l.active != v.Outcome.String():
			t.Errorf("decision %d: logged active %s, verdict %s", i, l.active, v.Outcome)
		case l.shadow.Outcome != "blocker" || l.shadow.codes() != "shadow-says-no" || l.shadow.Revision != rev:
			t.Errorf("decision %d: logged shadow %+v, want blocker shadow-says-no at %s", i, l.shadow, rev)
		case l.shadow.Reasons[0].Message != "":
			t.Errorf("decision %d: the shadow's reason message is logged: %q", i, l.shadow.Reasons[0].Message)
		}
	}
	if l := logged[invalid.DecisionID]; l.shadow.Skipped != "validation" || l.shadow.Outcome != "blocker" {
		t.Errorf("validation blocker: logged shadow %+v, want the blocker, skipped for validation", l.shadow)
	}
	st, ok := e.ShadowStatus()
	if !ok || st.Compared[[2]string{"pass", "blocker"}] != 6 || st.Compared[[2]string{"escalate", "blocker"}] != 1 || st.Errors != 0 {
		t.Errorf("shadow status %+v, want 6 pass->blocker and 1 escalate->blocker", st)
	}
	counted := shadowCount(t, m, "everything", "sampling", "request", "pass", "blocker")
	if counted != 2 { // the plain request and the reconsidered one
		t.Errorf("mcpxfw_shadow_decisions_total{everything,sampling,request,pass,blocker} = %v, want 2", counted)
	}
}

// shadowCount is one series of mcpxfw_shadow_decisions_total (server,
// kind, stage, active, shadow), read through the registry as a scrape
// reads it.
func shadowCount(t *testing.T, m *telemetry.Metrics, labels ...string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"server", "kind", "stage", "active", "shadow"}
	for _, mf := range mfs {
		if mf.GetName() != "mcpxfw_shadow_decisions_total" {
			continue
		}
	series:
		for _, s := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			for i, n := range names {
				if l[n] != labels[i] {
					continue series
				}
			}
			return s.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %v", labels)
	return 0
}

// A shadow that does not compile, and one that runs out of time, change
// no verdict: each is reported (log, status, metrics) and nothing else.
func TestShadowFailureChangesNothing(t *testing.T) {
	tests := []struct {
		name    string
		shadow  PolicyConfig
		failure string // the mcpxfw_shadow_failures_total reason
	}{
		{"does not compile", PolicyConfig{Dir: "../testdata/policies/syntax-error"}, telemetry.ShadowError},
		{"times out", PolicyConfig{Dir: "../testdata/policies/slow", Timeout: 10 * time.Millisecond}, telemetry.ShadowTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := telemetry.New(telemetry.Options{Servers: []string{"everything"}, Shadow: true})
			e, buf := shadowEngine(t, tt.shadow, m)
			v := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100)))
			if v.Outcome != OutcomePass || v.Err != nil {
				t.Fatalf("verdict %v %v (%v), want the active policy's pass", v.Outcome, v.ReasonCodes(), v.Err)
			}
			e.Close()
			l := loggedShadows(t, buf)[v.DecisionID]
			if l.active != "pass" || l.shadow.Outcome != "error" || l.shadow.Error == nil {
				t.Errorf("logged %+v, want the active pass beside the shadow's error", l)
			}
			st, _ := e.ShadowStatus()
			if st.Errors != 1 || (tt.failure == telemetry.ShadowTimeout) != (st.Timeouts == 1) {
				t.Errorf("shadow status %+v, want one error (a timeout: %v)", st.ShadowTally, tt.failure == telemetry.ShadowTimeout)
			}
			if tt.failure == telemetry.ShadowError && (st.Revision != "" || st.Source != SourceDir || st.LastError == "" || st.Reloads[ReloadCompileError] != 1) {
				t.Errorf("shadow status %+v, want no revision and the compile error", st.PolicyStatus)
			}
			if n := shadowCount(t, m, "everything", "sampling", "request", "pass", "error"); n != 1 {
				t.Errorf("shadow decisions pass->error = %v, want 1", n)
			}
		})
	}
}

// The upstream is the attacker: whatever it sends, it cannot make the
// shadow delay a decision or change one. A shadow busy far longer than
// any decision (testdata slow, with a minute to run) leaves every verdict
// the active policy's, made while the shadow still works on the first;
// decisions beyond its queue are logged at once, without it, and counted
// as dropped; Close ends the rest within its bound, and no decision's
// log line is lost.
func TestShadowNeverDelaysADecision(t *testing.T) {
	m := telemetry.New(telemetry.Options{Servers: []string{"everything"}, Shadow: true})
	e, buf := shadowEngine(t, PolicyConfig{Dir: "../testdata/policies/slow", Timeout: time.Minute}, m)
	e.shadow.queue.drain = 10 * time.Millisecond
	n := shadowQueueSize + 3
	ids := make([]string, 0, n)
	for i := range n {
		v := e.Decide(t.Context(), sampling("everything", textParams("Hello "+itoa(i), 100)))
		if v.Outcome != OutcomePass {
			t.Fatalf("decision %d: %v %v (%v)", i, v.Outcome, v.ReasonCodes(), v.Err)
		}
		ids = append(ids, v.DecisionID)
	}
	st, _ := e.ShadowStatus()
	if len(st.Compared) != 0 || st.Dropped == 0 {
		t.Errorf("shadow status %+v while the shadow still judges the first decision: want nothing compared, some dropped", st.ShadowTally)
	}
	e.Close()
	logged := loggedShadows(t, buf)
	for i, id := range ids {
		if l, ok := logged[id]; !ok || l.active != "pass" {
			t.Errorf("decision %d: logged %+v (%v), want its line with the active pass", i, l, ok)
		}
	}
	if st, _ := e.ShadowStatus(); st.Dropped+st.Errors != int64(n) {
		t.Errorf("shadow status %+v after Close: every one of %d decisions is dropped or failed", st.ShadowTally, n)
	}
}

// The shadow's folder is watched as the active policy's is: an edit
// there changes the shadow's revision and outcomes, never the active
// policy's.
func TestShadowHotReload(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	e, buf := shadowEngine(t, PolicyConfig{Dir: dir}, nil)
	events := watching(t, e, e.shadow.eng)
	active, before := e.Revision(), e.ShadowRevision()
	first := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100)))
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "global.rego"), shadowSaysNo)
	ev := awaitReload(t, events, func(ev reloadEvent) bool { return ev.err == nil && ev.revision != before })
	second := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100)))
	if e.Revision() != active || e.ShadowRevision() != ev.revision {
		t.Errorf("after the shadow's edit: active %s (was %s), shadow %s (reloaded %s)", e.Revision(), active, e.ShadowRevision(), ev.revision)
	}
	e.Close()
	logged := loggedShadows(t, buf)
	if l := logged[first.DecisionID]; l.shadow.Outcome != "pass" || l.shadow.Revision != before {
		t.Errorf("before the edit: %+v, want the shadow's pass at %s", l, before)
	}
	if l := logged[second.DecisionID]; l.active != "pass" || l.shadow.Outcome != "blocker" || l.shadow.Revision != ev.revision {
		t.Errorf("after the edit: %+v, want the active pass and the shadow's blocker at %s", l, ev.revision)
	}
}

// A shadow from a bundle service is fetched, kept in the state dir under
// its own name (never over the active policy's bundle) and polled for new
// revisions, as policy.bundle is.
func TestShadowFromBundle(t *testing.T) {
	rig := newBundleRig(t)
	var buf bytes.Buffer
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: "../testdata/policies/permit-all"},
		Shadow: &PolicyConfig{Bundle: withShadowName(rig.config()), Data: fixtureData(t)}, DecisionLog: &buf})
	t.Cleanup(e.Close)
	stop, err := e.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if st, _ := e.ShadowStatus(); st.Revision != "r1" || st.Source != SourceBundle {
		t.Fatalf("shadow at start-up: %+v", st.PolicyStatus)
	}
	kept := filepath.Join(rig.state, "bundles", "mcpxfw-shadow", "bundle.tar.gz")
	if b, err := os.ReadFile(kept); err != nil || !bytes.Equal(b, rig.r1) {
		t.Errorf("the shadow's bundle is not kept in %s: %v", kept, err)
	}
	if _, err := os.Stat(filepath.Join(rig.state, "bundles", "mcpxfw")); err == nil {
		t.Error("the shadow's bundle was kept where the active policy's bundle goes")
	}
	rig.srv.Serve(rig.r2)
	waitFor(t, 10*time.Second, "the shadow at r2", func() bool { return e.ShadowRevision() == "r2" })
	v := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100)))
	if v.Outcome != OutcomePass {
		t.Errorf("verdict %v %v, want the active pass", v.Outcome, v.ReasonCodes())
	}
	e.Close()
	if l := loggedShadows(t, &buf)[v.DecisionID]; l.shadow.Outcome != "blocker" || l.shadow.codes() != "frozen" || l.shadow.Revision != "r2" {
		t.Errorf("logged %+v, want the shadow's r2 blocker frozen", l)
	}
}

func withShadowName(c *policybundle.Config) *policybundle.Config {
	c.Bundle = policybundle.ShadowName
	return c
}

// quotingShadow fails on the upstream's own text: to_number quotes the
// system prompt in its error.
const quotingShadow = `package mcpxfw.global

deny contains {"code": "numeric-prompt", "message": "x"} if {
	to_number(input.request.systemPrompt) > 0
}
`

// A shadow's error that quotes what the upstream wrote is masked in the
// decision log as the active policy's errors are; its reasons are codes,
// never messages.
func TestShadowErrorIsMasked(t *testing.T) {
	dir := copyPolicyDir(t, "../testdata/policies/permit-all")
	writePolicyFile(t, filepath.Join(dir, "mcpxfw", "global.rego"), quotingShadow)
	e, buf := shadowEngine(t, PolicyConfig{Dir: dir}, nil)
	v := e.Decide(t.Context(), sampling("notes", loggedParams))
	if v.Outcome != OutcomePass {
		t.Fatalf("verdict %v %v (%v), want the active pass", v.Outcome, v.ReasonCodes(), v.Err)
	}
	e.Close()
	l := loggedShadows(t, buf)[v.DecisionID]
	if l.shadow.Outcome != "error" || l.shadow.Error == nil {
		t.Fatalf("logged %+v, want the shadow's error", l.shadow)
	}
	for _, w := range loggedWords {
		if bytes.Contains(buf.Bytes(), []byte(w)) {
			t.Errorf("the decision log carries %q", w)
		}
	}
}

// A shadow never reaches the store: the same decisions made with and
// without one leave the same usage (requests and tokens, in every
// window) and the same number of audit entries.
func TestShadowLeavesTheStoreAlone(t *testing.T) {
	run := func(shadow *PolicyConfig) (map[string]review.Usage, int) {
		e, store := newTestEngine(t, Config{Policy: PolicyConfig{Dir: "../testdata/policies/permit-all", Data: kindsData(t)}, Shadow: shadow})
		ctx := t.Context()
		s := sampling("everything", textParams("Hello", 100))
		e.Decide(ctx, s)
		e.Check(ctx, s, []byte(`{"role":"assistant","model":"m","content":{"type":"text","text":"hello there"},"stopReason":"endTurn"}`))
		held := s
		held.AwaitAnswer = true
		first := e.Decide(ctx, held)
		e.Reconsider(ctx, held, nil, Approval{DecisionID: first.DecisionID, By: "op", At: time.Now()})
		e.Decide(ctx, kindRequest(KindElicitation, "everything", form("name", "Name", "Who are you?")))
		e.Close()
		reader, err := store.UsageReader(ctx, DefaultUsageWindows)
		if err != nil {
			t.Fatal(err)
		}
		usage, err := reader.Read(ctx, "everything", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		_, entries, err := store.VerifyAudit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return usage, entries
	}
	wantUsage, wantAudit := run(nil)
	gotUsage, gotAudit := run(&PolicyConfig{Dir: denyingShadow(t), Data: kindsData(t)})
	if !maps.Equal(gotUsage, wantUsage) || gotAudit != wantAudit {
		t.Errorf("with a shadow: usage %v, %d audit entries; without: %v, %d", gotUsage, gotAudit, wantUsage, wantAudit)
	}
	if wantUsage["hour"].Requests == 0 || wantAudit == 0 {
		t.Fatalf("nothing recorded to compare: usage %v, %d audit entries", wantUsage, wantAudit)
	}
}

// A shadow whose bundle service is down at start-up stops nothing: the
// engine starts, the shadow is reported as failed, and it loads once the
// service serves a bundle.
func TestShadowBundleLoadsLater(t *testing.T) {
	rig := newBundleRig(t)
	rig.srv.Fail(http.StatusServiceUnavailable)
	e, _ := newTestEngine(t, Config{Policy: PolicyConfig{Dir: "../testdata/policies/permit-all"},
		Shadow: &PolicyConfig{Bundle: withShadowName(rig.config()), Data: fixtureData(t)}})
	t.Cleanup(e.Close)
	st, _ := e.ShadowStatus()
	if st.Revision != "" || st.Reloads[ReloadDownloadError] != 1 || st.LastError == "" {
		t.Fatalf("shadow with its service down: %+v, want no revision and the download error", st.PolicyStatus)
	}
	if v := e.Decide(t.Context(), sampling("everything", textParams("Hello", 100))); v.Outcome != OutcomePass {
		t.Errorf("verdict %v %v (%v), want the active pass", v.Outcome, v.ReasonCodes(), v.Err)
	}
	stop, err := e.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	rig.srv.Serve(rig.r1)
	waitFor(t, 10*time.Second, "the shadow at r1", func() bool { return e.ShadowRevision() == "r1" })
}

// The service sink ships the shadow's result as the file sink writes it,
// in the event's custom object, through OPA's own decision-log plugin.
func TestShadowShipped(t *testing.T) {
	col := collector.New()
	t.Cleanup(col.Close)
	sc := quick
	sc.URL = col.URL
	ship, err := logship.Start(t.Context(), sc, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ship.Stop(time.Second) })
	e, _ := newTestEngine(t, Config{DecisionLogService: ship, Policy: PolicyConfig{Dir: "../testdata/policies/permit-all"},
		Shadow: &PolicyConfig{Dir: denyingShadow(t), Data: fixtureData(t)}})
	v := e.Decide(t.Context(), sampling("notes", loggedParams))
	e.Close()
	waitFor(t, 30*time.Second, "the event at the collector", func() bool { return col.Received() >= 1 })
	ev := eventsByID(t, col.Events())[v.DecisionID]
	shadow, _ := pointerValue(ev, "/custom/shadow").(map[string]any)
	if shadow["outcome"] != "blocker" || shadow["revision"] != e.ShadowRevision() || pointerValue(ev, "/result/outcome") != "pass" {
		t.Errorf("shipped %v, want the active pass beside the shadow's blocker", ev)
	}
	for _, w := range loggedWords {
		if bytes.Contains(col.Bytes(), []byte(w)) {
			t.Errorf("the shipped event carries %q", w)
		}
	}
}
