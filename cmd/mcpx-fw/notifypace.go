package main

import (
	"sync"
	"time"
)

// notifyWindow is the span review.notify.max_per_minute counts in.
const notifyWindow = time.Minute

// pacer spaces out each server's announcements: at most max announced in
// any notifyWindow, the first at once. A review opened past that is held,
// and when the window lets one more go, the latest one held is announced
// with the number of the others held before it (note.more), which are
// never announced one by one. The concurrency bounds (max_running,
// max_queued) bound what runs at once; this bounds how often: an
// upstream that opens reviews and cancels them at once stays within every
// limit on pending reviews, and without it would have a run per review,
// as fast as the runs go, for as long as it liked.
//
// Servers are the configured names, so the state it keeps is bounded by
// the configuration, whatever an upstream does.
type pacer struct {
	max  int
	send func(note) // queues a note for the runs; never blocks

	mu      sync.Mutex
	servers map[string]*paced
	stopped bool
}

// paced is one server's recent announcements and what waits for the next.
type paced struct {
	sent  []time.Time // the last max announcements, oldest first
	held  *note       // the latest review not announced yet
	timer *time.Timer // announces held when the window allows
}

func newPacer(max int, send func(note)) *pacer {
	return &pacer{max: max, send: send, servers: map[string]*paced{}}
}

// opened announces nt now if its server is under max in the window, or
// holds it for later.
func (p *pacer) opened(nt note) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	s := p.servers[nt.server]
	if s == nil {
		s = &paced{}
		p.servers[nt.server] = s
	}
	now := time.Now()
	if s.held == nil && p.room(s, now) {
		p.announce(s, nt, now)
		return
	}
	if s.held != nil {
		nt.more = s.held.more + 1
	}
	s.held = &nt
	if s.timer == nil {
		server := nt.server
		s.timer = time.AfterFunc(s.sent[0].Add(notifyWindow).Sub(now), func() { p.release(server) })
	}
}

// room reports whether s may announce one more at now: fewer than max in
// the window before it.
func (p *pacer) room(s *paced, now time.Time) bool {
	return len(s.sent) < p.max || now.Sub(s.sent[0]) >= notifyWindow
}

// announce sends nt and counts it in s's window; callers hold mu.
func (p *pacer) announce(s *paced, nt note, now time.Time) {
	if len(s.sent) == p.max {
		s.sent = s.sent[1:]
	}
	s.sent = append(s.sent, now)
	p.send(nt)
}

// release announces what server holds, its window now allowing one more.
func (p *pacer) release(server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.servers[server]
	if p.stopped || s.held == nil {
		return
	}
	nt := *s.held
	s.held, s.timer = nil, nil
	p.announce(s, nt, time.Now())
}

// stop drops what is held: the reviews of a stopping serve are abandoned.
func (p *pacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, s := range p.servers {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
}
