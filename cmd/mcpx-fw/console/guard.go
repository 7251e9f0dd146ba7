package console

import (
	"crypto/subtle"
	"net/http"
)

// csp lets the page load only its own script, style and images, post only
// to itself, and be framed by nobody: text an upstream smuggled past the
// escaping would still run nothing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// headers sets the security headers every response carries.
func headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// guard refuses a request whose Host is not the console's own (a page on
// another site whose name was rebound to this address) or whose Origin,
// when the browser sends one, is another site's; then it sets the
// security headers and serves.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		if !s.hosts.Allows(r.Host) {
			http.Error(w, "this console answers only at its own address", http.StatusMisdirectedRequest)
			return
		}
		if !sameOrigin(r) {
			http.Error(w, "requests from another origin are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxForm bounds what a form may post (an edited document included).
const maxForm = 8 << 20

// signedIn serves only a browser with a session, and a POST only with the
// session's CSRF token in its form.
func (s *Server) signedIn(next func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		csrf, ok := s.sessions.of(r)
		if !ok {
			http.Error(w, "not signed in: open the sign-in link mcpx-fw console printed", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(csrf)) != 1 {
			http.Error(w, "the form's CSRF token is missing or wrong: reload the page and try again", http.StatusForbidden)
			return
		}
		next(w, r, csrf)
	}
}

// sameOrigin reports whether the request's Origin, when it has one, is
// the console's own. Under Referrer-Policy no-referrer a browser posts a
// form with Origin "null"; that is taken as the console's own only when
// the browser's Sec-Fetch-Site says so (a sandboxed frame on another site
// also sends "null", with cross-site).
func sameOrigin(r *http.Request) bool {
	switch o := r.Header.Get("Origin"); o {
	case "", "http://" + r.Host:
		return true
	case "null":
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return false
}
