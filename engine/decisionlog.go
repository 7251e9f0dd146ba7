package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// decisionLog writes one JSON line per decision in OPA's decision-log
// (EventV1) shape, so existing OPA tooling can read it. Prompt and
// completion text are replaced by salted digests unless content logging
// was turned on: equal texts still correlate, but nothing readable leaks.
type decisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	content bool
	salt    []byte
}

func newDecisionLog(w io.Writer, includeContent bool) *decisionLog {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	return &decisionLog{w: w, content: includeContent, salt: salt}
}

// event is the subset of OPA's EventV1 that mcpx-fw fills in.
type event struct {
	DecisionID string            `json:"decision_id"`
	Path       string            `json:"path"`
	Input      any               `json:"input"`
	Result     any               `json:"result"`
	Timestamp  time.Time         `json:"timestamp"`
	Labels     map[string]string `json:"labels"`
	Masked     []string          `json:"masked,omitempty"`
	Error      string            `json:"error,omitempty"`
}

func (d *decisionLog) write(v Verdict, input map[string]any, revision string) {
	if d == nil || d.w == nil {
		return
	}
	ev := event{
		DecisionID: v.DecisionID,
		Path:       "mcpxfw/decision",
		Input:      input,
		Result:     v,
		Timestamp:  time.Now().UTC(),
		Labels:     map[string]string{"policy_revision": revision, "stage": string(v.Stage)},
	}
	if v.Err != nil {
		ev.Error = v.Err.Error()
	}
	if !d.content {
		ev.Input, ev.Masked = d.mask(input), maskedPaths
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = d.w.Write(append(line, '\n'))
}

// maskedPaths names what mask replaces, as OPA's "masked" field does.
var maskedPaths = []string{"/input/request", "/input/result", "/input/facts/texts"}

// textKeys are the keys whose string values are people's words.
var textKeys = map[string]bool{"text": true, "systemPrompt": true, "data": true, "texts": true}

func (d *decisionLog) mask(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if textKeys[k] {
				out[k] = d.digestAll(val)
			} else {
				out[k] = d.mask(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = d.mask(val)
		}
		return out
	}
	return v
}

// digestAll replaces every string under v with its salted digest.
func (d *decisionLog) digestAll(v any) any {
	switch t := v.(type) {
	case string:
		h := sha256.New()
		h.Write(d.salt)
		h.Write([]byte(t))
		return "sha256:" + hex.EncodeToString(h.Sum(nil)[:12])
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = d.digestAll(val)
		}
		return out
	}
	return d.mask(v)
}
