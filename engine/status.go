package engine

import (
	"sync"
	"time"
)

// Reload results, the fixed words a policy load attempt ends in. They
// label the reload metric and appear in `mcpx-fw status`; nothing an
// upstream sends can add one.
const (
	// ReloadOK: a new revision compiled and now decides (or the same
	// revision was loaded again).
	ReloadOK = "ok"
	// ReloadCompileError: the policy could not be read, parsed or
	// compiled; the previous revision keeps deciding.
	ReloadCompileError = "compile_error"
	// ReloadDownloadError: a bundle could not be fetched.
	ReloadDownloadError = "download_error"
	// ReloadVerifyError: a bundle's signature did not verify.
	ReloadVerifyError = "verify_error"
)

// PolicySource names where the deciding policy comes from.
const (
	SourceDir    = "dir"
	SourceBundle = "bundle"
	// SourceEmbedded: the shipped policies built into the binary
	// (PolicyConfig.FS), used when no directory is configured.
	SourceEmbedded = "embedded"
)

// PolicyStatus is what the engine knows of its policy: which revision
// decides, where it came from and how the load attempts went. Metrics,
// /readyz and `mcpx-fw status` all read it, so they never disagree.
type PolicyStatus struct {
	Revision string    // the revision deciding now
	Source   string    // SourceDir, SourceEmbedded or SourceBundle
	Location string    // the directory, the bundle's URL, or ShippedPolicyName
	LoadedAt time.Time // when Revision started deciding
	// Reloads counts load attempts since start-up by result (the Reload*
	// words), the first load included.
	Reloads map[string]int64
	// LastError is the most recent failed attempt's error, "" when the
	// last attempt succeeded; LastErrorAt is when it failed.
	LastError   string
	LastErrorAt time.Time
}

// policyState keeps PolicyStatus up to date as loads succeed and fail.
type policyState struct {
	mu sync.Mutex
	st PolicyStatus
}

func newPolicyState(source, location string) *policyState {
	return &policyState{st: PolicyStatus{Source: source, Location: location, Reloads: map[string]int64{}}}
}

// loaded notes that revision now decides.
func (s *policyState) loaded(revision string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if revision != s.st.Revision {
		s.st.Revision, s.st.LoadedAt = revision, at
	}
	s.st.Reloads[ReloadOK]++
	s.st.LastError, s.st.LastErrorAt = "", time.Time{}
}

// failed notes a load attempt that ended in result (a Reload* word other
// than ReloadOK); the previous revision keeps deciding.
func (s *policyState) failed(result string, err error, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Reloads[result]++
	s.st.LastError, s.st.LastErrorAt = err.Error(), at
}

// status is a copy the caller may keep.
func (s *policyState) status() PolicyStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Reloads = make(map[string]int64, len(s.st.Reloads))
	for k, v := range s.st.Reloads {
		st.Reloads[k] = v
	}
	return st
}

// PolicyStatus reports the deciding revision and how loading has gone.
func (e *Engine) PolicyStatus() PolicyStatus { return e.policyState.status() }

// DecisionLogStats are one decision-log sink's counts since start-up.
type DecisionLogStats struct {
	Sink    string // "file" (a file or stderr) or "service"
	Written int64  // lines (events) the sink took
	Lost    int64  // lines lost: failed writes, or a full buffer's drops
}

// DecisionLogStats reports each configured decision-log sink's counts;
// empty when the decision log is off.
func (e *Engine) DecisionLogStats() []DecisionLogStats { return e.dlog.stats() }
