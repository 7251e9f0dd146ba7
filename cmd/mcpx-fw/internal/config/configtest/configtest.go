// Package configtest is what the tests of the config and of the commands
// reading it share: an environment without MCPXFW_* variables and a config
// file in a folder of its own.
package configtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// configEnv is every MCPXFW_* variable these tests rely on being unset.
var configEnv = []string{
	"MCPXFW_STATE_DIR", "MCPXFW_POLICY_DIR", "MCPXFW_POLICY_DEFAULT", "MCPXFW_POLICY_TIMEOUT",
	"MCPXFW_REVIEW_TIMEOUT", "MCPXFW_REVIEW_RETAIN", "MCPXFW_SAMPLING_HOST_TIMEOUT", "MCPXFW_DECISION_LOG_SINK",
	"MCPXFW_DECISION_LOG_INCLUDE_CONTENT", "MCPXFW_LOG_LEVEL", "MCPXFW_LOG_FILE", "MCPXFW_HTTP_ALLOW_REMOTE",
	"MCPXFW_ISOLATION_DEFAULT", "MCPXFW_STORE_URL",
	"MCPXFW_HTTP_SESSION_TIMEOUT", "MCPXFW_HTTP_MAX_SESSIONS", "MCPXFW_HTTP_READ_TIMEOUT", "MCPXFW_HTTP_IDLE_TIMEOUT",
	"MCPXFW_HTTP_MAX_HEADER_BYTES", "MCPXFW_HTTP_MAX_BODY_BYTES", "MCPXFW_LIMITS_MAX_IN_FLIGHT",
	"MCPXFW_LIMITS_MAX_PENDING_REVIEWS", "MCPXFW_LIMITS_MAX_HELD_BYTES", "MCPXFW_LIMITS_MAX_IN_FLIGHT_PER_HOST",
	"MCPXFW_LIMITS_MAX_PENDING_REVIEWS_PER_HOST", "MCPXFW_LIMITS_MAX_HELD_BYTES_PER_HOST",
}

// CleanEnv clears MCPXFW_* and pins XDG_STATE_HOME, so the default
// state dir is known; it returns that state home.
func CleanEnv(t *testing.T) string {
	t.Helper()
	for _, k := range configEnv {
		t.Setenv(k, "")
	}
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", home)
	return home
}

// WriteFile writes a config file named mcpx-fw.yaml in a new folder
// and returns its path.
func WriteFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcpx-fw.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WantError fails the test unless err names every one of want (keys,
// words of the message).
func WantError(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Load succeeded, want an error naming %v", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not name %q:\n%v", w, err)
		}
	}
}
