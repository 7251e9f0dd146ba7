package engine

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/logship"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// decisionPath is the decision's path in OPA's terms, as the log names it.
const decisionPath = "mcpxfw/decision"

// decisionLog writes one JSON line per decision as OPA's decision-log
// event (logs.EventV1), so existing OPA tooling can read it, and hands the
// same event to the service sink, if any, to ship. Unless content
// logging was turned on, everything an upstream or a host wrote is
// replaced by salted digests (see inputShapes for what is kept and why):
// equal texts still correlate, but nothing readable leaks.
type decisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	ship    *logship.Shipper // nil: no service sink
	content bool
	log     *zap.Logger
	// dropped counts lines lost since writing started failing; 0 while
	// the sink works. Guarded by mu.
	dropped int64
	// written and lost count lines since start-up, for DecisionLogStats.
	// Guarded by mu.
	written, lost int64
	// macs holds keyed HMAC states for digest: keying one costs two hash
	// blocks, and a decision digests every text it carries.
	macs sync.Pool
	// encoders holds logEncoders whose buffers have grown to the size of a
	// line, so writing one does not grow a buffer again.
	encoders sync.Pool
	// env is the deciding revision's envelope (see envelope).
	env atomic.Pointer[envelope]
}

// newDecisionLog writes to w (nil: nowhere), ships to ship (nil: nowhere)
// and reports a sink that stops taking lines to log. A nil salt gets a
// random one, so digests correlate within this process only.
func newDecisionLog(w io.Writer, ship *logship.Shipper, includeContent bool, salt []byte, log *zap.Logger) *decisionLog {
	if salt == nil {
		salt = make([]byte, logSaltBytes)
		_, _ = rand.Read(salt)
	}
	if log == nil {
		log = zap.NewNop()
	}
	d := &decisionLog{w: w, ship: ship, content: includeContent, log: log}
	d.macs.New = func() any { return hmac.New(sha256.New, salt) }
	d.encoders.New = func() any {
		e := &logEncoder{}
		e.enc = json.NewEncoder(&e.line)
		return e
	}
	return d
}

// write logs one decision: labels (policy_revision, stage), decision_id,
// bundles, path, input, result, masked, error, timestamp and metrics, as
// OPA's EventV1 names them, masked unless content is logged. It is called
// for every decision, including those of cancelled requests. A failed
// write is dropped, never retried inline: the store's decision row is the
// record of authority, and a decision must not wait on a full disk. The
// service log says when lines start being lost and, with how many, when
// writing works again. The service sink gets the same event, masked the
// same way, before anything leaves the process.
func (d *decisionLog) write(v Verdict, input map[string]any, revision string, metrics map[string]any, span trace.SpanContext) {
	d.writeWith(v, input, revision, metrics, span, nil)
}

// writeWith is write, custom (when not nil) the event's custom object:
// the shadow policy's result.
func (d *decisionLog) writeWith(v Verdict, input map[string]any, revision string, metrics map[string]any, span trace.SpanContext, custom map[string]any) {
	if d == nil || d.w == nil && d.ship == nil {
		return
	}
	e := d.encoder()
	defer d.release(e)
	in, result := e.parts(v, input)
	ev := newEvent(v, d.envelope(revision), in, result, e.masking, newEventError(v.Err, e.errorText), metrics)
	traced(&ev, span)
	ev.Custom = custom
	if d.w != nil {
		d.writeLine(e, &ev)
	}
	if d.ship != nil {
		// The plugin keeps the event until it uploads it; the encoder's
		// buffer goes back to the pool.
		ev.Input, ev.Result = boxed(bytes.Clone(in)), boxed(bytes.Clone(result))
		d.ship.Ship(ev)
	}
}

// envelope is revision's envelope, made anew when the revision changed.
func (d *decisionLog) envelope(revision string) *envelope {
	if env := d.env.Load(); env != nil && env.revision == revision {
		return env
	}
	env := newEnvelope(revision)
	d.env.Store(env)
	return env
}

// writeLine writes ev to the file sink as one line.
func (d *decisionLog) writeLine(e *logEncoder, ev *logs.EventV1) {
	line, err := e.encodeLine(ev)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		_, err = d.w.Write(line)
	}
	d.noteWrite(err, ev.DecisionID)
}

// boxed is raw JSON as EventV1's *any members hold it.
func boxed(raw []byte) *any {
	var v any = json.RawMessage(raw)
	return &v
}

// errorText is err as the service log may show it, masked as a masked
// decision log shows it whatever include_content says: the service log
// never carries what an upstream wrote.
func (d *decisionLog) errorText(err error) string {
	m := masker{macs: &d.macs, seen: map[string]string{}}
	return m.errorText(err)
}

// maxLoggedViolations is the most violations one service-log line names;
// the first decide, and reason_codes counts them all.
const maxLoggedViolations = 10

// violationPlaces are a decision's first violations as the service log
// names them, "rule at path", the path masked as a masked decision log
// masks it whatever include_content says (see maskedPath).
func (d *decisionLog) violationPlaces(vs []validate.Violation, input map[string]any) []string {
	m := masker{macs: &d.macs, seen: map[string]string{}}
	fields := schemaFields(input)
	out := make([]string, 0, min(len(vs), maxLoggedViolations))
	for _, vi := range vs[:min(len(vs), maxLoggedViolations)] {
		path := vi.Path
		if !placePath(path, fields) {
			path = m.digestText(path)
		}
		out = append(out, vi.Rule+" at "+path)
	}
	return out
}

// noteWrite logs the sink's transitions, not every failure: one error
// when lines start being lost, one line when they stop. Called with mu
// held.
func (d *decisionLog) noteWrite(err error, decisionID string) {
	if err != nil {
		d.lost++
	} else {
		d.written++
	}
	switch {
	case err != nil && d.dropped == 0:
		d.dropped = 1
		d.log.Error("decision log: writing failed; decisions are still recorded in the store, their log lines are lost until writing works again",
			zap.String("decision_id", decisionID), zap.Error(err))
	case err != nil:
		d.dropped++
	case d.dropped > 0:
		d.log.Info("decision log: writing again", zap.Int64("lines_lost", d.dropped))
		d.dropped = 0
	}
}

// encoder returns a pooled encoder, emptied, masking unless content is
// logged.
func (d *decisionLog) encoder() *logEncoder {
	e := d.encoders.Get().(*logEncoder)
	e.buf, e.keys, e.masking = e.buf[:0], e.keys[:0], !d.content
	e.line.Reset()
	if e.masking {
		e.mask.reset(&d.macs)
	}
	return e
}

// release pools e again, first dropping the texts its masker remembers so
// a pooled encoder keeps no prompt alive.
func (d *decisionLog) release(e *logEncoder) {
	clear(e.mask.seen)
	d.encoders.Put(e)
}

// stats are the sinks' counts; none when the log is off.
func (d *decisionLog) stats() []DecisionLogStats {
	if d == nil {
		return nil
	}
	var out []DecisionLogStats
	if d.w != nil {
		d.mu.Lock()
		out = append(out, DecisionLogStats{Sink: "file", Written: d.written, Lost: d.lost})
		d.mu.Unlock()
	}
	if d.ship != nil {
		written, lost := d.ship.Stats()
		out = append(out, DecisionLogStats{Sink: "service", Written: written, Lost: lost})
	}
	return out
}
