package telemetry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Access is what one request to the ops listener may read. The zero value
// refuses, so a request nobody judged reads nothing.
type Access int

const (
	// Refused is a request that brought credentials, and wrong ones: it is
	// answered 401 whatever it asks for.
	Refused Access = iota
	// Public is a request without credentials where a token is required:
	// it learns that the process is alive and whether it is ready, which
	// is all a liveness or readiness probe (one that sends no token) needs,
	// and nothing that names a server, a file, a revision or a count.
	Public
	// Full reads everything: the metrics, each readiness check and the
	// whole status document.
	Full
)

// Everyone gives every request full access: the ops listener when no
// token is required.
func Everyone(*http.Request) Access { return Full }

// Handler serves /metrics (the Prometheus exposition), /healthz (200 "ok"
// while the process serves HTTP at all), /readyz (200 when every
// readiness check passes, 503 otherwise, naming each failing one; plain
// text, or JSON with ?format=json or Accept: application/json) and
// /status (JSON for `mcpx-fw status`). access judges each request: a
// Public one gets /healthz, /readyz's verdict without the checks, and
// /status's ready alone; /metrics is Full's only.
func (m *Metrics) Handler(access func(*http.Request) Access) http.Handler {
	gate := func(serve func(http.ResponseWriter, *http.Request, bool)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch a := access(r); a {
			case Full, Public:
				serve(w, r, a == Full)
			default:
				unauthorized(w, `Bearer realm="mcpx-fw ops", error="invalid_token"`, "the token was refused")
			}
		}
	}
	metrics := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", gate(func(w http.ResponseWriter, r *http.Request, full bool) {
		if !full {
			unauthorized(w, `Bearer realm="mcpx-fw ops"`, "/metrics needs the ops token")
			return
		}
		metrics.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /healthz", gate(func(w http.ResponseWriter, _ *http.Request, _ bool) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	}))
	mux.HandleFunc("GET /readyz", gate(m.serveReady))
	mux.HandleFunc("GET /status", gate(m.serveStatus))
	return mux
}

// unauthorized answers 401 with the challenge and what to send.
func unauthorized(w http.ResponseWriter, challenge, why string) {
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, why+": send Authorization: Bearer <the token in metrics.token_file>", http.StatusUnauthorized)
}

// Restricted is what /status says, in place of the status, to a request
// without the token.
const Restricted = "the full status needs the ops token (metrics.token_file): send Authorization: Bearer <token>"

func (m *Metrics) serveStatus(w http.ResponseWriter, r *http.Request, full bool) {
	if full {
		writeJSON(w, http.StatusOK, m.Status(r.Context()))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Ready      bool   `json:"ready"`
		Restricted string `json:"restricted"`
	}{Ready(m.Readiness(r.Context())), Restricted})
}

func (m *Metrics) serveReady(w http.ResponseWriter, r *http.Request, full bool) {
	checks := m.Readiness(r.Context())
	ready := Ready(checks)
	code := http.StatusOK
	if !ready {
		code = http.StatusServiceUnavailable
	}
	if !full {
		checks = nil // the verdict only: the checks name servers and files
	}
	if wantsJSON(r) {
		writeJSON(w, code, struct {
			Ready  bool    `json:"ready"`
			Checks []Check `json:"checks,omitempty"`
		}{ready, checks})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	if ready {
		fmt.Fprintln(w, "ready")
		return
	}
	fmt.Fprintln(w, "not ready")
	for _, c := range checks {
		if !c.OK {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.Error)
		}
	}
}

func wantsJSON(r *http.Request) bool {
	return r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
