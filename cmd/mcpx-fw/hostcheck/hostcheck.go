package hostcheck

import (
	"net"
	"net/http"
	"strings"
)

// Hosts is the set of Host values one listener answers.
type Hosts struct {
	exact map[string]bool
	// anyIP is the port at which any IP literal is taken as this
	// listener's own: set for a listener on every interface (0.0.0.0,
	// [::]), which has no one address a client must use.
	anyIP string
}

// For returns the Host values a client sends to a listener at addrs
// (host:port: the address the listener reports, and the one its operator
// configured, which may be a name): each address itself, and for a
// loopback one localhost at its port. A listener on every interface also
// answers any IP literal at its port, and localhost: a rebound name is
// never an IP literal, so none of those can be an attacker's.
func For(addrs ...string) Hosts {
	h := Hosts{exact: map[string]bool{}}
	for _, addr := range addrs {
		h.add(addr)
	}
	return h
}

func (h *Hosts) add(addr string) {
	h.exact[strings.ToLower(addr)] = true
	host, port, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if err != nil || ip == nil {
		return
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		h.exact[net.JoinHostPort("localhost", port)] = true
	}
	if ip.IsUnspecified() {
		h.anyIP = port
	}
}

// Allows reports whether host, a request's Host, is one of h. Names are
// compared without regard to case, as DNS does.
func (h Hosts) Allows(host string) bool {
	host = strings.ToLower(host)
	if h.exact[host] {
		return true
	}
	if h.anyIP == "" {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	return err == nil && port == h.anyIP && net.ParseIP(name) != nil
}

// Guard serves next only the requests whose Host is one of h, and refuses
// the others with 421 Misdirected Request, before next reads anything.
func (h Hosts) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allows(r.Host) {
			http.Error(w, refusal, http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal is what a refused request is told; it does not repeat the
// Host it was sent.
const refusal = "this listener answers only at its own address (its Host header names another)"
