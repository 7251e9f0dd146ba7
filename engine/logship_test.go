package engine

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/logship"
	"github.com/mcpx-fw/mcpx-fw/engine/logship/collector"
)

// lockedBuffer is a file sink a test reads while serve writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// events are the file sink's lines, by decision id.
func (b *lockedBuffer) events(t *testing.T) map[string]map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	return eventsByID(t, bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")))
}

func eventsByID[T ~[]byte](t *testing.T, lines []T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("event %.200s: %v", line, err)
		}
		id := ev["decision_id"].(string)
		if out[id] != nil {
			t.Errorf("decision %s arrived twice", id)
		}
		out[id] = ev
	}
	return out
}

// shipping is an engine with a file sink and a service sink uploading to
// a real collector.
type shipping struct {
	e    *Engine
	ship *logship.Shipper
	file *lockedBuffer
	col  *collector.Collector
}

func newShipping(t *testing.T, content bool, sc logship.Config) *shipping {
	t.Helper()
	return newShippingLog(t, content, sc, zaptest.NewLogger(t))
}

// newShippingLog is newShipping with the service sink logging to log.
func newShippingLog(t *testing.T, content bool, sc logship.Config, log *zap.Logger) *shipping {
	t.Helper()
	col := collector.New()
	t.Cleanup(col.Close)
	sc.URL = col.URL
	sc.Labels = map[string]string{"app": "mcpx-fw"}
	ship, err := logship.Start(t.Context(), sc, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ship.Stop(time.Second) })
	file := &lockedBuffer{}
	e, _ := newTestEngine(t, Config{DecisionLog: file, DecisionLogService: ship, IncludeContent: content,
		Policy: PolicyConfig{Dir: "../testdata/policies/permit-all"}})
	return &shipping{e: e, ship: ship, file: file, col: col}
}

// serverInfoWords is what the upstream claims to be: its words too.
const serverInfoWords = "SERVER-INFO-WORDS-foxtrot"

// decide makes n request-stage and n result-stage decisions on
// loggedParams and loggedResult, which carry every kind of text once,
// from an upstream whose serverInfo carries serverInfoWords.
func (s *shipping) decide(t *testing.T, n int) {
	t.Helper()
	req := sampling("notes", loggedParams)
	req.Server.Reported = map[string]any{"name": serverInfoWords, "version": "1"}
	for range n {
		if v := s.e.Decide(t.Context(), req); v.Outcome != OutcomePass {
			t.Fatalf("request: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
		}
		if v := s.e.Check(t.Context(), req, []byte(loggedResult)); v.Outcome != OutcomePass {
			t.Fatalf("result: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
		}
	}
}

// serviceStats is the engine's report of the service sink.
func serviceStats(t *testing.T, e *Engine) DecisionLogStats {
	t.Helper()
	for _, s := range e.DecisionLogStats() {
		if s.Sink == "service" {
			return s
		}
	}
	t.Fatal("DecisionLogStats reports no service sink")
	return DecisionLogStats{}
}

// quick uploads every second, OPA's shortest delay.
var quick = logship.Config{MinDelay: time.Second, MaxDelay: time.Second}

// Every decision reaches the collector exactly once, as the file sink
// wrote it but for the labels (the plugin's manager's) and masked (which
// OPA's plugin sets only from its own mask policy); and with content off
// nothing the upstream or the host wrote is in any uploaded byte. With
// content on every word is there, so the test plants them where an event
// shows them.
func TestServiceSinkShipsEveryDecisionOnce(t *testing.T) {
	for _, content := range []bool{false, true} {
		s := newShipping(t, content, quick)
		s.decide(t, 5)
		waitFor(t, 30*time.Second, "10 events at the collector", func() bool { return s.col.Received() >= 10 })
		if bad := s.col.Malformed(); len(bad) > 0 {
			t.Fatalf("malformed uploads: %v", bad)
		}
		shipped := eventsByID(t, s.col.Events())
		written := s.file.events(t)
		if got, want := slices.Sorted(maps.Keys(shipped)), slices.Sorted(maps.Keys(written)); !slices.Equal(got, want) {
			t.Fatalf("shipped decisions %v, file sink's %v", got, want)
		}
		for id, ev := range shipped {
			checkShippedLabels(t, ev["labels"])
			file := written[id]
			delete(ev, "labels")
			delete(file, "labels")
			delete(file, "masked")
			if !reflect.DeepEqual(ev, file) {
				t.Errorf("decision %s shipped as\n%v\nwritten as\n%v", id, ev, file)
			}
		}
		raw := string(s.col.Bytes())
		for _, w := range append(slices.Clone(loggedWords), "iVBORw0KGgo=", serverInfoWords) {
			if strings.Contains(raw, w) == !content {
				t.Errorf("content %v: uploaded bytes contain %q: %v", content, w, !content)
			}
		}
		if st := serviceStats(t, s.e); st.Written != 10 || st.Lost != 0 {
			t.Errorf("service sink stats %+v, want 10 written, none lost", st)
		}
	}
}

// checkShippedLabels: the manager's labels, which OPA puts on every event
// of an instance.
func checkShippedLabels(t *testing.T, labels any) {
	t.Helper()
	l, _ := labels.(map[string]any)
	if l["app"] != "mcpx-fw" || !strings.HasPrefix(l["id"].(string), "mcpxfw-") || l["version"] == "" {
		t.Errorf("shipped labels %v, want app, id and OPA's version", labels)
	}
}

// While the collector is down the plugin keeps the events and retries;
// once it is back they all arrive, none lost.
func TestServiceSinkOutlivesCollectorOutage(t *testing.T) {
	s := newShipping(t, false, quick)
	s.col.SetDown(true)
	s.decide(t, 3)
	waitFor(t, 30*time.Second, "an upload refused while down", func() bool { return s.col.Refused() > 0 })
	if n := s.col.Received(); n != 0 {
		t.Fatalf("%d events received while down", n)
	}
	s.col.SetDown(false)
	waitFor(t, 30*time.Second, "6 events after the outage", func() bool { return s.col.Received() >= 6 })
	if got, want := slices.Sorted(maps.Keys(eventsByID(t, s.col.Events()))), slices.Sorted(maps.Keys(s.file.events(t))); !slices.Equal(got, want) {
		t.Errorf("after the outage shipped %v, file sink wrote %v", got, want)
	}
	if st := serviceStats(t, s.e); st.Lost != 0 {
		t.Errorf("service sink lost %d across an outage within its buffer", st.Lost)
	}
}

// Beyond its buffer the plugin drops the oldest events, and
// DecisionLogStats counts each: decisions made minus events received.
// Uploads wait a minute, so nothing leaves before Stop, which flushes
// what is buffered.
func TestServiceSinkCountsDrops(t *testing.T) {
	sc := logship.Config{BufferEvents: 4, MinDelay: time.Minute, MaxDelay: time.Minute}
	s := newShipping(t, false, sc)
	s.decide(t, 5)
	s.ship.Stop(10 * time.Second)
	made := len(s.file.events(t))
	got := s.col.Received()
	st := serviceStats(t, s.e)
	if made != 10 || got != 4 || st.Lost != int64(made-got) || st.Written != int64(made) {
		t.Errorf("made %d decisions, collector got %d, stats %+v: want 10, 4 and 6 lost", made, got, st)
	}
}

// Stopping the sink returns soon after its timeout even while an upload
// hangs on a collector that accepted it and never answers: serve's exit
// does not wait on the collector (the plugin's own HTTP client would hold
// it for its 10s response timeout).
//
// The plugin's loop outlives Stop here, until the hung upload ends, so the
// sink logs nowhere: its lines would come after the test.
func TestServiceSinkStopIsBounded(t *testing.T) {
	s := newShippingLog(t, false, quick, zap.NewNop())
	s.col.Stall()
	s.decide(t, 1)
	waitFor(t, 30*time.Second, "an upload held by the stalled collector", func() bool { return s.col.Stalled() > 0 })
	s.decide(t, 1)
	stopped := make(chan struct{})
	go func() { defer close(stopped); s.ship.Stop(time.Second) }()
	select {
	case <-stopped:
	case <-time.After(6 * time.Second):
		t.Fatal("Stop(1s) still waiting on a hung upload after 6s")
	}
}

// TestServiceSinkBoundsEventSize: the plugin's buffer is bounded in
// events, and holds each until its next upload; an upstream's request of
// many texts (one letter each, the same letter: a masked event of about a
// megabyte that still compresses under the upload limit) must not be
// held, or an upstream could hold buffer_size_limit_events of them. It is
// lost and counted; the file sink still has it.
func TestServiceSinkBoundsEventSize(t *testing.T) {
	sc := logship.Config{MinDelay: time.Minute, MaxDelay: time.Minute}
	s := newShippingLog(t, false, sc, zap.NewNop())
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"role":"user","content":[` + strings.Repeat(`{"type":"text","text":"a"},`, 9) + `{"type":"text","text":"a"}]}`)
	}
	b.WriteString(`],"maxTokens":10}`)
	if v := s.e.Decide(t.Context(), sampling("notes", b.String())); v.Outcome != OutcomePass {
		t.Fatalf("request: %v %v %v", v.Outcome, v.ReasonCodes(), v.Err)
	}
	if n := len(s.file.events(t)); n != 1 {
		t.Fatalf("the file sink has %d events, want 1", n)
	}
	if st := serviceStats(t, s.e); st.Written != 0 || st.Lost != 1 {
		t.Errorf("a %d-byte file line: service sink stats %+v, want it lost, not buffered", s.file.len(), st)
	}
}

func (b *lockedBuffer) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
