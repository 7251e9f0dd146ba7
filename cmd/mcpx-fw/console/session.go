package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
)

// cookieName holds the session id. The id is random and lives only in
// this process: restarting the console signs everyone out.
const cookieName = "mcpxfw_session"

// sessions are the signed-in browsers, and the one-time sign-in token
// printed at start. The token works once: the browser that uses it gets a
// session cookie and the link is void, so a link left in a terminal's
// scrollback or a shell history signs nobody else in.
type sessions struct {
	mu    sync.Mutex
	login string            // "" once used
	byID  map[string]string // session id → its CSRF token
}

func newSessions() *sessions {
	return &sessions{login: randomToken(), byID: map[string]string{}}
}

// randomToken is 32 random bytes in hex.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// redeem consumes the sign-in token and opens a session, returning its id;
// ok is false for a wrong or already used token.
func (s *sessions) redeem(token string) (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.login)) != 1 {
		return "", false
	}
	s.login = ""
	id = randomToken()
	s.byID[id] = randomToken()
	return id, true
}

// of returns the CSRF token of the request's session; ok is false
// without a valid session cookie.
func (s *sessions) of(r *http.Request) (csrf string, ok bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	csrf, ok = s.byID[c.Value]
	return csrf, ok
}

// sessionCookie is the cookie that carries id: not readable by script,
// never sent by another site's page.
func sessionCookie(id string) *http.Cookie {
	return &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
}
