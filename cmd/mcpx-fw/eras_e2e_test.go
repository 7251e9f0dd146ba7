package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// The era matrix with peers nobody here wrote: each upstream that asks for
// completions (by push, or by 2026-07-28 input request) behind each host
// (the Go SDK client forced to each era, and the npm client 2.x), with a
// request the policy permits, one it denies, one that breaks a structural
// limit and one a person approves.

// matrixUpstream is one real upstream and the tool that makes it sample.
type matrixUpstream struct {
	name    string
	entry   func(t *testing.T) string // command and protocol lines of its servers: entry
	tool    string
	args    map[string]any
	answers string // what its tool result says around the host's completion
}

func matrixUpstreams() []matrixUpstream {
	return []matrixUpstream{
		{"go-everything-push", func(t *testing.T) string {
			return fmt.Sprintf("    command: [%q]\n    protocol: legacy\n", everythingServer(t))
		}, "test_sampling", map[string]any{"prompt": "Say hello to the matrix."}, "LLM response: "},
		{"npm-everything-push", func(t *testing.T) string {
			server := repoPath(t, "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
			return fmt.Sprintf("    command: [%q, %q, stdio]\n", nodeSetup(t), server)
		}, "trigger-sampling-request", map[string]any{"prompt": "Say hello to the matrix.", "maxTokens": 100}, "LLM sampling result"},
		{"go-everything-input-request", func(t *testing.T) string {
			return fmt.Sprintf("    command: [%q]\n    protocol: 2026-07-28\n", everythingServer(t))
		}, "test_input_required_result_sampling", map[string]any{}, "Sampling response: "},
	}
}

// matrixCase is one request outcome, set by the firewall's configuration
// since the peers' requests are fixed: every one asks for 100 tokens with
// a short text.
type matrixCase struct {
	name    string
	server  string // extra lines of the servers: entry
	limits  string // the limits: section
	want    string // answered, denied or invalid
	approve bool
}

var matrixCases = []matrixCase{
	{"permit", "    label: pass\n    max_tokens: 1000\n", "", "answered", false},
	{"deny", "    label: pass\n    max_tokens: 50\n", "", "denied", false},
	{"invalid", "    label: pass\n    max_tokens: 1000\n", "limits:\n  max_text_bytes: 10\n", "invalid", false},
	{"escalate", "    label: hold\n    max_tokens: 1000\n", "", "answered", true},
}

// matrixPolicy is the shipped policy set plus a package for the server
// "matrix" that holds every request for review when its label says so
// (the peers' requests are fixed, so the configuration must choose).
func matrixPolicy(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "policies")
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "policies"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "servers"), "matrix.rego", `package mcpxfw.servers.matrix

import data.mcpxfw.lib

review contains {"code": "matrix-hold", "message": "the era matrix holds this server's requests"} if {
	lib.request_stage
	data.mcpxfw.config.servers.matrix.label == "hold"
}

permit := true
`)
	return dir
}

// matrixHost runs one tool call through `mcpx-fw serve` as one kind of
// host and reports the outcome and how often the host's model was asked.
// prepare, if set, does what the host needs once per test binary (the npm
// install): it runs before anything that waits with a deadline starts,
// since on a fresh clone it takes longer than any such wait.
type matrixHost struct {
	name    string
	prepare func(t *testing.T)
	call    func(t *testing.T, cfg string, up matrixUpstream) (outcome string, asked int)
}

const matrixAnswer = "matrix host says hi"

func matrixHosts() []matrixHost {
	goHost := func(version string) func(*testing.T, string, matrixUpstream) (string, int) {
		return func(t *testing.T, cfg string, up matrixUpstream) (string, int) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, ProtocolVersion: version,
				Answer: answerWith(`{"role":"assistant","model":"m","content":{"type":"text","text":"` + matrixAnswer + `"}}`)})
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			defer h.Close()
			res, err := h.CallTool(ctx, up.tool, up.args)
			var pe *peer.Error
			switch {
			case errors.As(err, &pe):
				return codeOutcome(pe.Code, pe.Message), len(h.Asked)
			case err != nil:
				t.Fatalf("call: %v", err)
			}
			return textOutcome(res.Text), len(h.Asked)
		}
	}
	return []matrixHost{
		{"go-host-2025-11-25", nil, goHost("2025-11-25")},
		{"go-host-2026-07-28", nil, goHost("2026-07-28")},
		{"npm-host-2026-07-28", func(t *testing.T) { nodeSetup(t) }, npmHostCall},
	}
}

// npmHostCall runs the call as @modelcontextprotocol/client 2.x pinned to
// 2026-07-28 (testdata/npm/host2026.mjs).
func npmHostCall(t *testing.T, cfg string, up matrixUpstream) (string, int) {
	args, _ := json.Marshal(up.args)
	node := nodeSetup(t) // before the deadline: the first call installs
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, repoPath(t, "testdata/npm/host2026.mjs"), up.tool, string(args), binary, "serve", "--config", cfg)
	out, _ := cmd.Output()
	var got struct {
		Result *struct {
			Content []struct{ Text string }
			IsError bool
		}
		Error *struct {
			Code    int64
			Message string
		}
		Sampled int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("npm host printed %q: %v", out, err)
	}
	if got.Error != nil {
		return codeOutcome(got.Error.Code, got.Error.Message), got.Sampled
	}
	var text strings.Builder
	for _, c := range got.Result.Content {
		text.WriteString(c.Text)
	}
	return textOutcome(strings.ReplaceAll(text.String(), "npm-host says hi", matrixAnswer)), got.Sampled
}

// codeOutcome names a refusal a host's call failed with.
func codeOutcome(code int64, msg string) string {
	switch code {
	case -1:
		return "denied"
	case -32602:
		return "invalid"
	}
	return fmt.Sprintf("error %d: %s", code, msg)
}

// textOutcome reads a tool result that reports what its push got.
func textOutcome(text string) string {
	switch {
	case strings.Contains(text, matrixAnswer):
		return "answered"
	case strings.Contains(text, "denied by policy"):
		return "denied"
	case strings.Contains(text, "Text content too large"):
		return "invalid"
	}
	return "unexpected: " + text
}

func TestEraMatrixWithPeers(t *testing.T) {
	for _, up := range matrixUpstreams() {
		for _, host := range matrixHosts() {
			for _, tc := range matrixCases {
				t.Run(up.name+"/"+host.name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					cfg := matrixConfig(t, up, tc)
					if host.prepare != nil {
						host.prepare(t)
					}
					// The approver's deadline starts here, when only the
					// call itself is left to make the review.
					if tc.approve {
						approved := make(chan struct{})
						go func() { defer close(approved); approveNext(t, cfg) }()
						defer func() { <-approved }()
					}
					got, asked := host.call(t, cfg, up)
					if got != tc.want {
						t.Fatalf("outcome %q, want %q", got, tc.want)
					}
					if wantAsked := tc.want == "answered"; (asked > 0) != wantAsked {
						t.Errorf("host asked %d time(s), want asked=%v", asked, wantAsked)
					}
				})
			}
		}
	}
}

// matrixConfig is a serve config with up as the server "matrix", set for tc.
func matrixConfig(t *testing.T, up matrixUpstream, tc matrixCase) string {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`state_dir: %s
policy:
  dir: %s
review:
  timeout: 1m
sampling:
  host_timeout: 30s
%sservers:
  matrix:
%s%s
log:
  file: %s
`, filepath.Join(dir, "state"), matrixPolicy(t), tc.limits, up.entry(t), tc.server, filepath.Join(dir, "serve.log"))
	return writeFile(t, dir, "mcpx-fw.yaml", cfg)
}
