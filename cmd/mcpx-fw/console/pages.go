package console

import (
	"net/http"
)

// page is what every template gets: the session's CSRF token for its
// forms, and the page's own data.
type page struct {
	CSRF string
	Data any
}

// render writes the named template with status, or a plain error.
func (s *Server) render(w http.ResponseWriter, status int, name, csrf string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = s.pages.ExecuteTemplate(w, name, page{CSRF: csrf, Data: data})
}

func (s *Server) queuePage(w http.ResponseWriter, r *http.Request, csrf string) {
	s.queueAs(w, r, csrf, "queue.html")
}

// queueFragment is the queue's list alone, which the page's script swaps
// in on each change event.
func (s *Server) queueFragment(w http.ResponseWriter, r *http.Request, csrf string) {
	s.queueAs(w, r, csrf, "queue-list")
}

// queueAs renders the pending queue with the template name.
func (s *Server) queueAs(w http.ResponseWriter, r *http.Request, csrf, name string) {
	items, err := s.actions.Queue(r.Context())
	if err != nil {
		http.Error(w, "the queue could not be read", http.StatusInternalServerError)
		return
	}
	s.render(w, http.StatusOK, name, csrf, items)
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, csrf string) {
	a, err := s.actions.Audit(r.Context())
	if err != nil {
		http.Error(w, "the audit log could not be read", http.StatusInternalServerError)
		return
	}
	s.render(w, http.StatusOK, "audit.html", csrf, a)
}
