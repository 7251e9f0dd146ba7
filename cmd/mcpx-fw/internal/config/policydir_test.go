package config

import (
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// TestPolicyDirUnsetIsShipped: a config that names no policy.dir leaves it
// empty (the shipped, embedded policies decide), never the config's folder.
func TestPolicyDirUnsetIsShipped(t *testing.T) {
	configtest.CleanEnv(t)
	cfg, err := Load(configtest.WriteFile(t, "policy:\n  default: review\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "policy.dir", cfg.Policy.Dir, "")
}

// TestPolicyDirEmptyIsError: policy.dir: "" written out is a one-line
// error naming the key, not the config's folder loaded as a policy (every
// JSON file under it, node_modules too).
func TestPolicyDirEmptyIsError(t *testing.T) {
	configtest.CleanEnv(t)
	_, err := Load(configtest.WriteFile(t, "policy:\n  dir: \"\"\n"))
	configtest.WantError(t, err, "policy.dir: is empty", "shipped policies", "mcpx-fw policy init")
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines:\n%v", err)
	}
}
