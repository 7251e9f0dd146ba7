package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestAccess: a request without the token (Public) learns whether serve
// is alive and ready and nothing else: no server name, no budget, no
// count, no path, no revision; /metrics refuses it with a Bearer
// challenge. A request with a wrong token (Refused) reads nothing at all,
// and the zero Access is that. Full reads everything.
func TestAccess(t *testing.T) {
	const secretish = "alpha-SERVERNAME"
	m := New(Options{Servers: []string{secretish}, Windows: []string{"hour"}})
	m.SetSources(Sources{
		Policy: func() Policy { return Policy{Revision: "rev-REVISION", Location: "/etc/POLICYDIR"} },
		Pending: func(context.Context) ([]Pending, error) {
			return []Pending{{Server: secretish, Stage: "request", Count: 7}}, nil
		},
		Usage: func(context.Context, string) (map[string]Usage, error) {
			return map[string]Usage{"hour": {Requests: 3, Tokens: 99}}, nil
		},
		Writable: func(context.Context) error { return nil },
	})
	m.UpstreamStarted(secretish)
	m.UpstreamLost(secretish) // not ready, and the reason names the server
	paths := []string{"/metrics", "/healthz", "/readyz", "/readyz?format=json", "/status"}
	for _, tc := range []struct {
		name   string
		access Access
		want   map[string]int // code per path
	}{
		{"full", Full, map[string]int{"/metrics": 200, "/healthz": 200, "/readyz": 503, "/readyz?format=json": 503, "/status": 200}},
		{"public", Public, map[string]int{"/metrics": 401, "/healthz": 200, "/readyz": 503, "/readyz?format=json": 503, "/status": 200}},
		{"refused", Refused, map[string]int{"/metrics": 401, "/healthz": 401, "/readyz": 401, "/readyz?format=json": 401, "/status": 401}},
		{"zero", Access(0), map[string]int{"/metrics": 401, "/healthz": 401, "/readyz": 401, "/readyz?format=json": 401, "/status": 401}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range paths {
				code, challenge, body := getAs(m, func(*http.Request) Access { return tc.access }, path)
				if code != tc.want[path] {
					t.Errorf("%s: %d, want %d: %s", path, code, tc.want[path], body)
				}
				if code == http.StatusUnauthorized && !strings.HasPrefix(challenge, "Bearer ") {
					t.Errorf("%s: 401 without a Bearer challenge (%q)", path, challenge)
				}
				leaked := strings.Contains(body, secretish) || strings.Contains(body, "REVISION") || strings.Contains(body, "POLICYDIR") ||
					strings.Contains(body, "99") || strings.Contains(body, "reviews")
				if tc.access != Full && leaked {
					t.Errorf("%s without full access told: %s", path, body)
				}
				if tc.access == Full && path != "/healthz" && !strings.Contains(body, secretish) {
					t.Errorf("%s with full access does not name the server: %s", path, body)
				}
			}
		})
	}
	if _, _, body := getAs(m, func(*http.Request) Access { return Public }, "/status"); !strings.Contains(body, `"ready": false`) ||
		!strings.Contains(body, `"restricted"`) {
		t.Errorf("public /status = %s, want ready and restricted", body)
	}
}
