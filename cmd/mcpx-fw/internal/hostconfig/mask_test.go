package hostconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskedDiff: every env and headers value of each host's fixture, of
// every scope, is hidden in both the old and the new file's lines, its
// length shown; the other lines are as they are.
func TestMaskedDiff(t *testing.T) {
	for _, tc := range []struct{ host, file string }{
		{"claude-desktop", "claude-desktop.json"}, {"claude-code", "claude-code.json"}, {"claude-code", "claude-user.json"},
		{"vscode", "vscode.json"}, {"vscode", "vscode-comments.json"}, {"cursor", "cursor.json"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		h := Hosts[tc.host]
		got := h.MaskedDiff("f", data, nil) + h.MaskedDiff("f", nil, data)
		for _, secret := range []string{"ghp_fixture", "pat_fixture_key", "your-token", "${input:", "${env:", "${NOTION_TOKEN}", "Bearer"} {
			if strings.Contains(got, secret) {
				t.Errorf("%s: %q shown:\n%s", tc.file, secret, got)
			}
		}
		if strings.Count(got, "\n") != 2*(3+strings.Count(string(data), "\n")) || !strings.Contains(got, "mcpServers") && !strings.Contains(got, `"servers"`) {
			t.Errorf("%s: lines not kept:\n%s", tc.file, got)
		}
	}
	data := []byte(`{"mcpServers": {"a": {"command": "x", "env": {"K": "ghp_canary123", "Q": "a\"b"}, "args": ["env"]}}}`)
	want := `"env": {"K": "«hidden: 13 characters»", "Q": "«hidden: 3 characters»"}, "args": ["env"]`
	if got := Hosts["cursor"].MaskedDiff("f", nil, data); !strings.Contains(got, want) {
		t.Errorf("got %s, want %s", got, want)
	}
	odd := []byte(`{"mcpServers": {"a": {"env": {"N": 12345678, "O": {"k": "s1"}, "L": ["s2", true]}}}}`)
	if got := Hosts["cursor"].MaskedDiff("f", nil, odd); strings.Contains(got, "12345678") || strings.Contains(got, "s1") || strings.Contains(got, "s2") || strings.Contains(got, "true") {
		t.Errorf("a value not a string shown: %s", got)
	}
	if got := Hosts["cursor"].MaskedDiff("f", nil, []byte(`{"env": {"K": "secret"`)); strings.Contains(got, "secret") {
		t.Errorf("a file not read shown: %s", got)
	}
}
