package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAllows: a listener answers its own addresses (a configured name
// included) and localhost at its port; a rebound name, another port or
// another address is refused; a listener on every interface answers any
// IP literal at its port, never a name. (Each also gets 127.0.0.1:0, as
// a listener configured at port 0 does: it adds nothing.)
func TestAllows(t *testing.T) {
	for _, tc := range []struct {
		addr, host string
		want       bool
	}{
		{"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"127.0.0.1:9464", "localhost:9464", true},
		{"127.0.0.1:9464", "LOCALHOST:9464", true},
		{"127.0.0.1:9464", "evil.example:9464", false},
		{"127.0.0.1:9464", "127.0.0.1.nip.io:9464", false},
		{"127.0.0.1:9464", "localhost:9465", false},
		{"127.0.0.1:9464", "127.0.0.2:9464", false},
		{"127.0.0.1:9464", "127.0.0.1", false},
		{"127.0.0.1:9464", "", false},
		{"[::1]:9464", "[::1]:9464", true},
		{"[::1]:9464", "localhost:9464", true},
		{"192.168.1.10:9464", "192.168.1.10:9464", true},
		{"192.168.1.10:9464", "localhost:9464", false},
		{"0.0.0.0:9464", "10.0.0.5:9464", true},
		{"0.0.0.0:9464", "[fe80::1]:9464", true},
		{"0.0.0.0:9464", "localhost:9464", true},
		{"0.0.0.0:9464", "evil.example:9464", false},
		{"0.0.0.0:9464", "10.0.0.5:9465", false},
		{"[::]:9464", "10.0.0.5:9464", true},
		{"[::]:9464", "evil.example:9464", false},
		{"ops.internal:9464", "ops.internal:9464", true},
		{"ops.internal:9464", "OPS.internal:9464", true},
		{"ops.internal:9464", "evil.example:9464", false},
	} {
		if got := For(tc.addr, "127.0.0.1:0").Allows(tc.host); got != tc.want {
			t.Errorf("For(%q).Allows(%q) = %v, want %v", tc.addr, tc.host, got, tc.want)
		}
	}
}

// TestGuard: a refused request never reaches the handler and is told
// 421; an allowed one is served.
func TestGuard(t *testing.T) {
	reached := 0
	h := For("127.0.0.1:9464").Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached++
		_, _ = w.Write([]byte("secret"))
	}))
	for host, want := range map[string]int{"evil.example:9464": http.StatusMisdirectedRequest, "localhost:9464": http.StatusOK} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/status", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
	if reached != 1 {
		t.Errorf("the handler ran %d times, want once", reached)
	}
}
