package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// events streams a "changed" server-sent event whenever the queue changes,
// so the page can fetch the fresh list without a reload. It wakes on the
// store's own change signal and, for other processes' changes (which the
// store learns of only by reading), on a short poll compared against the
// list it last reported.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ string) {
	flush, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	last := s.fingerprint(r)
	// The page was rendered before this stream opened: a review that
	// arrived in between is in last, so no later change would announce
	// it. One "changed" now has the page fetch the list it subscribed at.
	fmt.Fprint(w, "retry: 1000\n\nevent: changed\ndata: queue\n\n")
	flush.Flush()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.actions.Changed():
		case <-tick.C:
		}
		if now := s.fingerprint(r); now != last {
			last = now
			fmt.Fprint(w, "event: changed\ndata: queue\n\n")
			flush.Flush()
		}
	}
}

// fingerprint names the queue's items and states, to tell a change.
func (s *Server) fingerprint(r *http.Request) string {
	items, err := s.actions.Queue(r.Context())
	if err != nil {
		return "error"
	}
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.ID + "=" + it.State
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
