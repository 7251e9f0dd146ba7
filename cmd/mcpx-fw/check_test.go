package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCheckPrintsOnlyItsReport: with the service log on stderr (no
// log.file), check prints its report and no log line; with log.file set,
// its logs go there.
func TestCheckPrintsOnlyItsReport(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", "state_dir: "+filepath.Join(dir, "state")+"\npolicy:\n  dir: "+
		repoPath(t, "policies")+"\nservers:\n"+peerServer("peer", 0))
	res := runCLI(t, "check", "--config", cfg)
	if res.code != 0 || res.stderr != "" || !strings.HasPrefix(res.stdout, "ok: 1 server(s)") || strings.Contains(res.stdout, `{"level"`) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want the report alone", res.code, res.stdout, res.stderr)
	}
	logged := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	res = runCLI(t, "check", "--config", logged)
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(logged), "serve.log"))
	if res.code != 0 || res.stderr != "" || !strings.Contains(string(log), `"msg":"policy loaded"`) {
		t.Errorf("check with log.file: exit %d, stderr %q, log %q; want the logs in log.file", res.code, res.stderr, log)
	}
}

// TestCheckCreatesNoStore: check against a state dir that does not exist
// leaves it so, and says serve will create the review store; against an
// existing store it says nothing of the kind.
func TestCheckCreatesNoStore(t *testing.T) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
	state := filepath.Join(filepath.Dir(cfg), "state")
	res := runCLI(t, "check", "--config", cfg)
	want := "review store: " + filepath.Join(state, "reviews.db") + " does not exist yet; serve will create it"
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want %q", res.code, res.stdout, res.stderr, want)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("check made the state dir %s (%v)", state, err)
	}
	openStore(t, cfg).Close()
	res = runCLI(t, "check", "--config", cfg)
	if res.code != 0 || strings.Contains(res.stdout, "does not exist yet") {
		t.Errorf("check of an existing store: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

// badShapePackage is a server package whose deny rule gives a string
// where a reason object belongs: every sampling request to the server
// would fail closed at run time.
const badShapePackage = `package mcpxfw.servers.good

import data.mcpxfw.lib

deny contains "no sampling here" if lib.sampling
`

// problemPolicies is a copy of the shipped policies with badShapePackage
// as server good's package.
func problemPolicies(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "servers/good.rego", badShapePackage)
	return dir
}

// TestCheckNamesEveryProblem: a server whose program is missing, one that
// exits at once, and a rule that returns a string where an object belongs
// are each named on a line of their own, and check exits 1; the server
// that starts gets its ok line, with how many tools it listed. What the
// server wrote to stderr shows, escaped, and no env value does.
func TestCheckNamesEveryProblem(t *testing.T) {
	servers := serverEntry([]string{everythingServer(t)}, "")
	cfg := testConfig(t, problemPolicies(t), time.Minute, "  good:\n"+servers+
		"  gone:\n    command: [/nonexistent/mcp-server]\n"+
		"  quits:\n    command: [sh, -c, \"printf 'bad token\\\\033[2J' >&2; exit 3\"]\n    env: {TOKEN: sekrit-value}\n")
	res := runCLI(t, "check", "--config", cfg)
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	want := []string{
		"mcpx-fw: " + cfg + ":13: servers.gone.command: its program (the first word) is not found",
		`mcpx-fw: quits: did not start: its process ended (exit status 3): `,
		`mcpx-fw: policy: data.mcpxfw.servers.good.deny returned "no sampling here" (server good, sampling request): reason is a string, not an object`,
	}
	if res.code != 1 || len(lines) != len(want) {
		t.Fatalf("check: exit %d, stderr:\n%s\nwant exit 1 and %d lines", res.code, res.stderr, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant it to start %q", i+1, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[1], `its stderr ends: "bad token\x1b[2J"`) || strings.Contains(res.stderr, "sekrit") || strings.Contains(res.stderr, "\x1b") {
		t.Errorf("quits' line %q: want the end of its stderr escaped, and no env value", lines[1])
	}
	if !regexp.MustCompile(`(?m)^ok: good: [1-9][0-9]* tools \((isolated|not isolated)\)$`).MatchString(res.stdout) {
		t.Errorf("check's report has no ok line for good:\n%s", res.stdout)
	}
}

// TestCheckNoStart: --no-start starts no server and looks up no program,
// as in CI without the servers' runtimes; it says so per server and still
// tries the policy.
func TestCheckNoStart(t *testing.T) {
	servers := "  gone:\n    command: [/nonexistent/mcp-server]\n  quits:\n    command: [sh, -c, \"exit 3\"]\n"
	res := runCLI(t, "check", "--no-start", "--config", testConfig(t, repoPath(t, "policies"), time.Minute, servers))
	if res.code != 0 || res.stderr != "" || !strings.Contains(res.stdout, "skipped: gone: not started (--no-start)\nskipped: quits: not started (--no-start)\n") {
		t.Errorf("check --no-start: exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, "check", "--no-start", "--config", testConfig(t, problemPolicies(t), time.Minute, strings.ReplaceAll(servers, "gone", "good")))
	if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, "data.mcpxfw.servers.good.deny returned") {
		t.Errorf("check --no-start of a rule of the wrong shape: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

// TestCheckShippedExample: config.example.yaml, its server's command
// pointed at an installed everything-server (the Go SDK's, and npm's
// @modelcontextprotocol/server-everything it names), passes check.
func TestCheckShippedExample(t *testing.T) {
	example, err := os.ReadFile(repoPath(t, "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	npx := `command: [npx, -y, "@modelcontextprotocol/server-everything"]`
	if !strings.Contains(string(example), npx) {
		t.Fatalf("config.example.yaml no longer runs its server with %s", npx)
	}
	for name, command := range map[string][]string{"go": goEverythingCommand(t), "npm": npmEverythingCommand(t)} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			text := strings.Replace(string(example), npx, strings.TrimSpace(serverEntry(command, "")), 1)
			text = strings.Replace(text, `state_dir: ""`, "state_dir: "+filepath.Join(dir, "state"), 1)
			res := runCLI(t, "check", "--config", writeFile(t, dir, "mcpx-fw.yaml", text))
			if res.code != 0 || res.stderr != "" || !regexp.MustCompile(`(?m)^ok: everything: [1-9][0-9]* tools \(isolated\)$`).MatchString(res.stdout) {
				t.Errorf("check of the example: exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
		})
	}
}

// TestCheckStartsHTTPServers: an HTTP server is initialized with its
// configured headers (a front that refuses requests without the key lets
// check's through); one that refuses check is a problem line that names
// it and shows no header value.
func TestCheckStartsHTTPServers(t *testing.T) {
	target, err := url.Parse(startEverythingHTTP(t, false))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // event streams pass as they come
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != "right-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	servers := fmt.Sprintf("  keyed:\n    url: %s/mcp\n    headers: {X-Key: right-key}\n  wrong:\n    url: %s/mcp\n    headers: {X-Key: wrong-key}\n", front.URL, front.URL)
	res := runCLI(t, "check", "--config", testConfig(t, repoPath(t, "policies"), time.Minute, servers))
	if res.code != 1 || !regexp.MustCompile(`(?m)^ok: keyed: [1-9][0-9]* tools \(over HTTP\)$`).MatchString(res.stdout) ||
		!oneLine(res.stderr) || !strings.HasPrefix(res.stderr, "mcpx-fw: wrong: did not start: ") || strings.Contains(res.stderr, "wrong-key") {
		t.Errorf("check: exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}

// refusingServer answers every request with an error whose message
// clears the screen and runs on for a thousand bytes.
const refusingServer = `while read -r line; do
  id=$(printf %s "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"\\u001b[2Jclear %s"}}\n' "$id" "$(head -c 1000 /dev/zero | tr '\0' x)"
done
`

// TestCheckBoundsWhatAServerSays: the error a server answers initialize
// with reaches check's problem line escaped and cut short, never as the
// terminal control it is.
func TestCheckBoundsWhatAServerSays(t *testing.T) {
	script := writeFile(t, t.TempDir(), "refuse.sh", refusingServer)
	res := runCLI(t, "check", "--config", testConfig(t, repoPath(t, "policies"), time.Minute, fmt.Sprintf("  evil:\n    command: [sh, %q]\n", script)))
	if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, `: \x1b[2Jclear xxx`) || strings.Contains(res.stderr, "\x1b") || len(res.stderr) > 500 {
		t.Errorf("check of a server that refuses: exit %d, stderr (%d bytes):\n%q", res.code, len(res.stderr), res.stderr)
	}
}

// TestShadowWarningIsOneLine: check's warning for a shadow that does not
// compile is one line, OPA's quoted source and caret folded into it.
func TestShadowWarningIsOneLine(t *testing.T) {
	var b strings.Builder
	shadowWarning(&b, "policies-next", "load policy: 1 error occurred: x.rego:3: rego_parse_error: unexpected eof token\n\tdeny contains x if {\n\t                    ^")
	out := b.String()
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "\t") || !strings.Contains(out, "unexpected eof token; deny contains x if {; ^") {
		t.Errorf("warning %q, want one line with the error folded into it", out)
	}
}
