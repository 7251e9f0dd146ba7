package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"io"
	"sync"
	"time"
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
	return d
}

// event is the subset of OPA's EventV1 that mcpx-fw fills in.
type event struct {
	DecisionID string            `json:"decision_id"`
	Path       string            `json:"path"`
	Input      any               `json:"input"`
	Result     any               `json:"result"`
	Timestamp  time.Time         `json:"timestamp"`
	Labels     map[string]string `json:"labels"`
	Metrics    map[string]int64  `json:"metrics,omitempty"`
	Masked     []string          `json:"masked,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// write logs one decision. It is called for every decision, including those
// of cancelled requests; a failed write is dropped, never retried inline.
func (d *decisionLog) write(v Verdict, input map[string]any, revision string, metrics map[string]int64) {
	if d == nil || d.w == nil {
		return
	}
	line, err := json.Marshal(d.event(v, input, revision, metrics))
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = d.w.Write(append(line, '\n'))
}

func (d *decisionLog) event(v Verdict, input map[string]any, revision string, metrics map[string]int64) event {
	ev := event{
		DecisionID: v.DecisionID,
		Path:       decisionPath,
		Input:      input,
		Result:     v,
		Timestamp:  time.Now().UTC(),
		Labels:     map[string]string{"policy_revision": revision, "stage": string(v.Stage)},
		Metrics:    metrics,
	}
	if v.Err != nil {
		ev.Error = v.Err.Error()
	}
	if !d.content {
		ev.Input, ev.Masked = d.masker().mask(input), maskedPaths
	}
	return ev
}
