package telemetry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (the Prometheus exposition), /healthz (200 "ok"
// while the process serves HTTP at all), /readyz (200 when every
// readiness check passes, 503 naming each failing one otherwise; plain
// text, or JSON with ?format=json or Accept: application/json) and
// /status (JSON for `mcpx-fw status`).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", m.serveReady)
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.Status(r.Context()))
	})
	return mux
}

func (m *Metrics) serveReady(w http.ResponseWriter, r *http.Request) {
	checks := m.Readiness(r.Context())
	ready := Ready(checks)
	code := http.StatusOK
	if !ready {
		code = http.StatusServiceUnavailable
	}
	if wantsJSON(r) {
		writeJSON(w, code, struct {
			Ready  bool    `json:"ready"`
			Checks []Check `json:"checks"`
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
