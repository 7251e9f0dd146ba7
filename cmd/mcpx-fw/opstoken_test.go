package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// TestOpsTokenFileConfig: metrics.token_file is relative to the config
// file, is read without its trailing newline, and is one of the paths an
// isolated upstream cannot reach (an upstream that read it would read the
// full status).
func TestOpsTokenFileConfig(t *testing.T) {
	configtest.CleanEnv(t)
	path := configtest.WriteFile(t, "state_dir: state\nmetrics:\n  addr: 127.0.0.1:0\n  token_file: secrets/ops.token\n")
	file := writeFile(t, filepath.Dir(path), "secrets/ops.token", opsTokenValue+"\r\n")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.TokenFile != file {
		t.Errorf("metrics.token_file = %q, want %q (relative to the config file)", cfg.Metrics.TokenFile, file)
	}
	if !slices.Contains(protectedPaths(cfg), file) {
		t.Errorf("protectedPaths %q leave out the token file", protectedPaths(cfg))
	}
	token, err := loadOpsToken(file)
	if err != nil || string(token) != opsTokenValue {
		t.Errorf("loadOpsToken = %q, %v; want the file's token without its line end", token, err)
	}
	if err := os.Chmod(filepath.Dir(file), 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOpsToken(file); err != nil {
		t.Errorf("a folder group can list but not write was refused: %v", err)
	}
}

// TestOpsAccess: with a token, only the exact token in one Bearer header
// reads everything (the scheme in any case, as RFC 6750 allows); no
// header reads what a probe needs; anything else is refused. Without a
// token every request reads everything.
func TestOpsAccess(t *testing.T) {
	judge := opsAccess([]byte(opsTokenValue))
	for _, tc := range []struct {
		name   string
		header []string // Authorization values; nil: none
		want   telemetry.Access
	}{
		{"none", nil, telemetry.Public},
		{"the token", []string{"Bearer " + opsTokenValue}, telemetry.Full},
		{"lower-case scheme", []string{"bearer " + opsTokenValue}, telemetry.Full},
		{"empty header", []string{""}, telemetry.Refused},
		{"scheme alone", []string{"Bearer"}, telemetry.Refused},
		{"a prefix of the token", []string{"Bearer " + opsTokenValue[:8]}, telemetry.Refused},
		{"the token and more", []string{"Bearer " + opsTokenValue + "0"}, telemetry.Refused},
		{"two spaces", []string{"Bearer  " + opsTokenValue}, telemetry.Refused},
		{"another scheme", []string{"Basic " + opsTokenValue}, telemetry.Refused},
		{"twice", []string{"Bearer " + opsTokenValue, "Bearer " + opsTokenValue}, telemetry.Refused},
		{"a wrong one first", []string{"Bearer x", "Bearer " + opsTokenValue}, telemetry.Refused},
	} {
		req := httptest.NewRequest(http.MethodGet, "/status", nil)
		for _, v := range tc.header {
			req.Header.Add("Authorization", v)
		}
		if got := judge(req); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/status", nil)
	req.Header.Set("Authorization", "Basic x")
	if got := opsAccess(nil)(req); got != telemetry.Full {
		t.Errorf("without a token: %v, want full access", got)
	}
}
