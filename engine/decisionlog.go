package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"sync"
)

// decisionPath is the decision's path in OPA's terms, as the log names it.
const decisionPath = "mcpxfw/decision"

// decisionLog writes one JSON line per decision in OPA's decision-log
// (EventV1) shape, so existing OPA tooling can read it. Prompt and
// completion text are replaced by salted digests unless content logging
// was turned on: equal texts still correlate, but nothing readable leaks.
type decisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	content bool
	// macs holds keyed HMAC states for digest: keying one costs two hash
	// blocks, and a decision digests every text it carries.
	macs sync.Pool
	// encoders holds logEncoders whose buffers have grown to the size of a
	// line, so writing one does not grow a buffer again.
	encoders sync.Pool
}

// newDecisionLog writes to w (nil: nowhere). A nil salt gets a random one,
// so digests correlate within this process only.
func newDecisionLog(w io.Writer, includeContent bool, salt []byte) *decisionLog {
	if salt == nil {
		salt = make([]byte, logSaltBytes)
		_, _ = rand.Read(salt)
	}
	d := &decisionLog{w: w, content: includeContent}
	d.macs.New = func() any { return hmac.New(sha256.New, salt) }
	d.encoders.New = func() any { return &logEncoder{} }
	return d
}

// write logs one decision: decision_id, path, input (masked unless content
// is logged), result, timestamp, labels (policy_revision, stage), metrics,
// masked and error, as OPA's EventV1 names them. It is called for every
// decision, including those of cancelled requests; a failed write is
// dropped, never retried inline.
func (d *decisionLog) write(v Verdict, input map[string]any, revision string, metrics map[string]int64) {
	if d == nil || d.w == nil {
		return
	}
	e := d.encoder()
	defer d.release(e)
	if err := e.event(v, input, revision, metrics); err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = d.w.Write(e.buf)
}

// encoder returns a pooled encoder, emptied, masking unless content is
// logged.
func (d *decisionLog) encoder() *logEncoder {
	e := d.encoders.Get().(*logEncoder)
	e.buf, e.keys, e.masking = e.buf[:0], e.keys[:0], !d.content
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
