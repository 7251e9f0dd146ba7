package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// opsTokenValue is the token the tests' token files hold.
const opsTokenValue = "ops-token-0123456789abcdef"

// opsPaths are every path of the ops listener.
var opsPaths = []string{"/metrics", "/healthz", "/readyz", "/readyz?format=json", "/status"}

// getWith fetches url with the given Host (none: the URL's) and
// Authorization (none: no header) and returns the code and body.
func getWith(t *testing.T, url, host, auth string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOpsReboundHost is the DNS-rebinding attack on the ops listener: a
// web page at evil.example, its name rebound to 127.0.0.1, asks every
// path with its own name as Host. Each is refused (421) with nothing of
// serve's in the answer; the listener's own address and localhost at its
// port are answered.
func TestOpsReboundHost(t *testing.T) {
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000))
	s := startOpsServe(t, cfg)
	addr := strings.TrimPrefix(s.ops, "http://")
	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, path := range opsPaths {
		for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port} {
			code, body := getWith(t, s.ops+path, host, "")
			if code != http.StatusMisdirectedRequest || strings.Contains(body, "alpha") || strings.Contains(body, "ready") ||
				strings.Contains(body, "mcpxfw_") {
				t.Errorf("%s with Host %s: %d %q, want 421 and nothing of serve's", path, host, code, body)
			}
		}
		for _, host := range []string{addr, "localhost:" + port} {
			if code, body := getWith(t, s.ops+path, host, ""); code != http.StatusOK {
				t.Errorf("%s with Host %s: %d %q, want 200", path, host, code, body)
			}
		}
	}
}

// writeOpsToken writes a token file of mode 0600 in a folder of its own.
func writeOpsToken(t *testing.T, token string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "ops.token", token)
}

// TestOpsToken: with metrics.token_file set, a request without the token
// (a scraper, a page, any local process) gets no server name, budget,
// count, path or revision: /metrics is refused, /status says only
// whether serve is ready, /readyz gives its verdict without the checks,
// /healthz answers. A wrong token is refused everywhere. The token reads
// everything, and `mcpx-fw status` sends it from the config; a config
// without it, or with another token, gets one line saying so.
func TestOpsToken(t *testing.T) {
	tokenFile := writeOpsToken(t, opsTokenValue+"\n")
	cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000))
	appendConfig(t, cfg, fmt.Sprintf("  token_file: %q\n", tokenFile))
	s := startOpsServe(t, cfg)
	leaks := func(body string) bool {
		return strings.Contains(body, "alpha") || strings.Contains(body, "hour") || strings.Contains(body, "sqlite") ||
			strings.Contains(body, "policies") || strings.Contains(body, "revision") || strings.Contains(body, "mcpxfw_") ||
			strings.Contains(body, "checks")
	}
	whole := map[string]string{"/metrics": "mcpxfw_decisions_total", "/status": `"server": "alpha"`, "/readyz?format=json": `"checks"`}
	public := map[string]int{"/metrics": 401, "/healthz": 200, "/readyz": 200, "/readyz?format=json": 200, "/status": 200}
	for _, path := range opsPaths {
		code, body := getWith(t, s.ops+path, "", "")
		if code != public[path] || leaks(body) {
			t.Errorf("%s without the token: %d %q, want %d and nothing that names serve's servers, files or use", path, code, body, public[path])
		}
		for _, wrong := range []string{"Bearer " + opsTokenValue + "x", "Bearer " + opsTokenValue[:10], "Basic " + opsTokenValue, "Bearer"} {
			if code, body := getWith(t, s.ops+path, "", wrong); code != http.StatusUnauthorized || leaks(body) {
				t.Errorf("%s with %q: %d %q, want 401 and nothing", path, wrong, code, body)
			}
		}
		if code, body := getWith(t, s.ops+path, "", "Bearer "+opsTokenValue); code != http.StatusOK || !strings.Contains(body, whole[path]) {
			t.Errorf("%s with the token: %d %q, want 200 and the whole answer", path, code, body)
		}
	}
	addr := strings.TrimPrefix(s.ops, "http://")
	if res := runCLI(t, "status", "--config", cfg, "--addr", addr); res.code != 0 || !strings.Contains(res.stdout, "alpha") {
		t.Errorf("status with the config's token: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	other := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("alpha", 1000))
	for _, tc := range []struct{ name, metrics, want string }{
		{"no token", "", "wants a token for its status, and this config names none"},
		{"another token", fmt.Sprintf("metrics:\n  token_file: %q\n", writeOpsToken(t, "another-token-0123456789")), "refused the token in metrics.token_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := writeFile(t, t.TempDir(), "mcpx-fw.yaml", readFile(t, other)+tc.metrics)
			res := runCLI(t, "status", "--config", c, "--addr", addr)
			if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, tc.want) || strings.Contains(res.stderr, opsTokenValue) {
				t.Errorf("status: exit %d, stderr %q; want 1 and one line saying %q", res.code, res.stderr, tc.want)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpsTokenFileRefused: a token file that cannot be trusted stops
// check, serve and status with one line naming metrics.token_file, the
// file and what to do, and never the token.
func TestOpsTokenFileRefused(t *testing.T) {
	dir := t.TempDir()
	loose := writeFile(t, dir, "loose.token", opsTokenValue)
	if err := os.Chmod(loose, 0o640); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	sharedToken := writeFile(t, shared, "ops.token", opsTokenValue)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.token")
	if err := os.Symlink(loose, link); err != nil {
		t.Fatal(err)
	}
	unreadable := writeFile(t, dir, "unreadable.token", opsTokenValue)
	if err := os.Chmod(unreadable, 0o200); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none.token"), "no such file or directory; make one with"},
		{"empty", writeFile(t, dir, "empty.token", ""), "is empty"},
		{"white space only", writeFile(t, dir, "blank.token", " \n\n"), "is empty"},
		{"short", writeFile(t, dir, "short.token", "abc\n"), "want at least 16"},
		{"inner space", writeFile(t, dir, "space.token", "ops token 0123456789"), "printable ASCII without spaces"},
		{"group readable", loose, "accessible by group or others (mode 0640)"},
		{"a link to a group-readable file", link, "accessible by group or others (mode 0640)"},
		{"in a folder others can write", sharedToken, "writable by group or others"},
		{"a folder", dir, "not a regular file"},
		{"unreadable", unreadable, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "unreadable" && os.Getuid() == 0 {
				t.Skip("root reads any file")
			}
			cfg := opsConfig(t, repoPath(t, "policies"), peerServer("alpha", 1000))
			appendConfig(t, cfg, fmt.Sprintf("  token_file: %q\n", tc.path))
			for _, args := range [][]string{{"check"}, {"serve"}, {"status"}} {
				res := runCLI(t, append(args, "--config", cfg)...)
				if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, "metrics.token_file "+tc.path) ||
					!strings.Contains(res.stderr, tc.want) || strings.Contains(res.stderr, "0123456789") {
					t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming metrics.token_file %s and saying %q, never the token",
						args[0], res.code, res.stderr, tc.path, tc.want)
				}
			}
		})
	}
}
