package console

import (
	"io"
	"net/http"
)

// render writes the page write makes with status.
func render(w http.ResponseWriter, status int, write func(*markup)) {
	var m markup
	write(&m)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, m.String())
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request, _ string) {
	s.queueAs(w, r, queuePage)
}

// queueFragment is the queue's list alone, which the page's script swaps
// in on each change event.
func (s *Server) queueFragment(w http.ResponseWriter, r *http.Request, _ string) {
	s.queueAs(w, r, queueList)
}

// queueAs renders the pending queue with page (the page or its list).
func (s *Server) queueAs(w http.ResponseWriter, r *http.Request, page func(*markup, []Summary)) {
	items, err := s.actions.Queue(r.Context())
	if err != nil {
		http.Error(w, "the queue could not be read", http.StatusInternalServerError)
		return
	}
	render(w, http.StatusOK, func(m *markup) { page(m, items) })
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, _ string) {
	a, err := s.actions.Audit(r.Context())
	if err != nil {
		http.Error(w, "the audit log could not be read", http.StatusInternalServerError)
		return
	}
	render(w, http.StatusOK, func(m *markup) { auditPage(m, a) })
}
