package console

import (
	"embed"
	"io/fs"
	"net/http"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/hostcheck"
)

//go:embed assets
var files embed.FS

// Server is the console over one Actions. It serves on a listener the
// caller opened (loopback unless the operator chose otherwise), so that
// Host can be checked against the address actually listened on.
type Server struct {
	actions  Actions
	hosts    hostcheck.Hosts
	sessions *sessions
	link     string // the sign-in path, printed once at start
	// poll is how often the queue is re-read for changes other processes
	// made, which Changed does not report on SQLite.
	poll time.Duration
}

// New returns the console for actions, listening at addr (host:port, as
// the listener reports it).
func New(actions Actions, addr string) *Server {
	ss := newSessions()
	return &Server{actions: actions, hosts: hostcheck.For(addr), sessions: ss, link: "/login?token=" + ss.login, poll: time.Second}
}

// LoginPath is the one-time sign-in link's path and query; the caller
// prints it with the listener's address in front.
func (s *Server) LoginPath() string { return s.link }

// Handler is the console's whole site.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(files, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("GET /{$}", s.signedIn(s.queuePage))
	mux.HandleFunc("GET /queue", s.signedIn(s.queueFragment))
	mux.HandleFunc("GET /events", s.signedIn(s.events))
	mux.HandleFunc("GET /review/{id}", s.signedIn(s.reviewPage))
	mux.HandleFunc("POST /review/{id}/approve", s.signedIn(s.approve))
	mux.HandleFunc("POST /review/{id}/reject", s.signedIn(s.reject))
	mux.HandleFunc("POST /review/{id}/answer", s.signedIn(s.answer))
	mux.HandleFunc("GET /audit", s.signedIn(s.auditPage))
	return s.guard(mux)
}

// login redeems the one-time token for a session cookie and goes to the
// queue; the same link a second time is refused.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessions.redeem(r.URL.Query().Get("token"))
	if !ok {
		http.Error(w, "this sign-in link is wrong or was used already: restart mcpx-fw console for a new one", http.StatusForbidden)
		return
	}
	http.SetCookie(w, sessionCookie(id))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
