package review

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestOpenURLNeverShowsPassword: the store's URL is shown in errors, in
// the service log and, through /readyz and /status, on the ops listener;
// a password given as a query parameter (libpq's password=, sslpassword=)
// is as secret as one in the user part and must be shown as neither.
func TestOpenURLNeverShowsPassword(t *testing.T) {
	const secret = "pw-never-shown"
	for _, raw := range []string{
		"postgres://fw:" + secret + "@127.0.0.1:1/fw?sslmode=disable",
		"postgres://fw@127.0.0.1:1/fw?sslmode=disable&password=" + secret,
		"postgresql://fw@127.0.0.1:1/fw?sslpassword=" + secret + "&sslmode=disable",
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		s, err := OpenURL(ctx, raw, zap.NewNop())
		cancel()
		if err == nil {
			s.Close()
			t.Fatalf("OpenURL %s: a store at port 1", raw)
		}
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("OpenURL's error shows the password, or not where it was:\n%v", err)
		}
	}
}
