package admit

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// refusalLog counts the refusals of what upstreams and hosts send, by
// kind (refusal), and logs them: the first of a kind at once, then at most
// one line per LogEvery, with how many came since; logTotals
// writes the totals the last lines left out. Whatever an upstream can
// have refused as often as it likes (past a limit, for want of a host, for
// a capability it was not offered) is logged here: a flood of refusals is
// the attack, and must not become a flood of log lines.
type refusalLog struct {
	log    *zap.Logger
	mu     sync.Mutex
	counts map[Refusal]*refusalCount
}

// Refusal is one kind of refusal, counted and logged on its own: what was
// refused and the outcome ("upstream request", "refused: limit reached"),
// the server it came from ("" for a host session), and the field that
// tells it from others of the same outcome (key, detail: the limit, why
// no host can answer, the capability; none when key is "").
type Refusal struct {
	What, Outcome string
	Server        string
	Key, Detail   string
}

// limitRefusal is the refusal of what by limit, for server.
func limitRefusal(what, server, limit string) Refusal {
	return Refusal{What: what, Outcome: "refused: limit reached", Server: server, Key: "limit", Detail: limit}
}

// refusalCount counts the refusals of one kind; logged is when the last
// log line about them was written.
type refusalCount struct {
	total, unlogged int64
	logged          time.Time
}

// LogEvery bounds the log lines about one kind of refusal.
const LogEvery = time.Second

func newRefusalLog(log *zap.Logger) *refusalLog {
	return &refusalLog{log: log, counts: map[Refusal]*refusalCount{}}
}

// count records a refusal of r and logs it: the first at once, then at
// most one line per LogEvery, with how many came since. more are
// fields of this one refusal for its line.
func (l *refusalLog) count(r Refusal, more ...zap.Field) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.counts[r]
	if n == nil {
		n = &refusalCount{}
		l.counts[r] = n
	}
	n.total++
	n.unlogged++
	if now := time.Now(); now.Sub(n.logged) >= LogEvery {
		l.log.Warn(r.What+" "+r.Outcome, r.fields(append(more, zap.Int64("refused", n.unlogged), zap.Int64("refused_total", n.total))...)...)
		n.logged, n.unlogged = now, 0
	}
}

// total is how many refusals of r were counted so far.
func (l *refusalLog) total(r Refusal) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.counts[r]; n != nil {
		return n.total
	}
	return 0
}

// logTotals writes one line per kind of refusal its lines left out, with
// the total.
func (l *refusalLog) logTotals() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for r, n := range l.counts {
		if n.unlogged > 0 {
			l.log.Warn(r.What+"s "+r.Outcome, r.fields(zap.Int64("refused", n.unlogged), zap.Int64("refused_total", n.total))...)
			n.unlogged = 0
		}
	}
}

// fields are the log fields of r: the server, when there is one, first,
// then its detail, when it has one, then more.
func (r Refusal) fields(more ...zap.Field) []zap.Field {
	fields := make([]zap.Field, 0, len(more)+2)
	if r.Server != "" {
		fields = append(fields, zap.String("server", r.Server))
	}
	if r.Key != "" {
		fields = append(fields, zap.String(r.Key, r.Detail))
	}
	return append(fields, more...)
}
