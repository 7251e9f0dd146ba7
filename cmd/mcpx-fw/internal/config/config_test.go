package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
	"github.com/mcpx-fw/mcpx-fw/relay"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// exampleConfigPath is the documented example at the repository root.
const exampleConfigPath = "../../../../config.example.yaml"

// defaultConfig is what Load returns with no file, from folder base.
// Servers is nil or empty; the comparisons equate the two.
func defaultConfig(stateHome, base string) Config {
	var c Config
	c.StateDir = filepath.Join(stateHome, "mcpx-fw")
	c.Store.Lease = 15 * time.Second
	c.Policy.Default = "review"
	c.Names.Prefix = "auto"
	c.Policy.Timeout = 250 * time.Millisecond
	c.Policy.Bundle.Resource = "bundles/bundle.tar.gz"
	c.Policy.Bundle.Polling.MinDelay, c.Policy.Bundle.Polling.MaxDelay = time.Minute, 2*time.Minute
	c.Policy.Bundle.Signing.KeyID = "default"
	c.Policy.Bundle.SizeLimitBytes = 32 << 20
	c.Policy.Shadow.Timeout = 250 * time.Millisecond
	c.Policy.Shadow.Bundle = c.Policy.Bundle
	c.Review.Timeout = 10 * time.Minute
	c.Review.Retain = 7 * 24 * time.Hour
	c.Replay.Keep = 0
	c.Replay.MaxBytes = 256 << 20
	c.Review.ProgressInterval = 10 * time.Second
	c.Review.Notify = Notify{Command: []string{}, Timeout: 10 * time.Second, MaxRunning: 2, MaxQueued: 16, MaxPerMinute: 6}
	c.Sampling.HostTimeout = 5 * time.Minute
	c.Restart = relay.RestartOptions{Backoff: time.Second, MaxBackoff: time.Minute, PingInterval: 30 * time.Second}
	c.Console.Addr = defaultConsoleAddr
	c.Isolation.Default = defaultIsolation()
	c.Limits = Limits{MaxRounds: 8, Limits: validate.Limits{MaxBytes: 4 << 20, MaxDepth: 32, MaxMessages: 1000, MaxBlocks: 100,
		MaxTextBytes: 1 << 20, MaxBase64Bytes: 3 << 20, MaxTools: 128,
		MaxFields: 100, MaxEnumValues: 500, MaxLabelBytes: 16 << 10, MaxURLBytes: 8 << 10, MaxRoots: 1000},
		Held: relay.Limits{InFlight: 48, PendingReviews: 32, HeldBytes: 16 << 20,
			HostInFlight: 24, HostPendingReviews: 16, HostHeldBytes: 8 << 20}}
	c.HTTP = HTTP{HTTPOptions: relay.HTTPOptions{SessionTimeout: 30 * time.Minute, MaxSessions: 32, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, MaxBodyBytes: 8 << 20}}
	c.Limits.MaxBridgedCalls, c.Limits.MaxBridgedCallsPerServer, c.Limits.BridgeWait = 64, 16, time.Minute
	c.DecisionLog.Sink = "stderr"
	c.DecisionLog.Service = DecisionLogService{Resource: "/logs", BufferSizeLimitEvents: 10000,
		MinDelay: 5 * time.Minute, MaxDelay: 10 * time.Minute, Headers: map[string]string{}}
	c.Tracing.SampleRatio = 1
	c.Log.Level = "info"
	return c
}

// TestConfigExample pins every value config.example.yaml states: the
// defaults of setDefaults plus the one example server.
func TestConfigExample(t *testing.T) {
	stateHome := configtest.CleanEnv(t)
	path, err := filepath.Abs(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(config.example.yaml): %v", err)
	}
	want := defaultConfig(stateHome, filepath.Dir(path))
	want.Servers = map[string]Server{"everything": {
		Command:   []string{"npx", "-y", "@modelcontextprotocol/server-everything"},
		Env:       map[string]string{},
		Label:     "Everything reference server",
		Protocol:  "auto",
		MaxTokens: 4096,
		Sampling:  true, Elicitation: relay.ElicitationConfig{Enabled: true}, Roots: relay.RootsConfig{Enabled: true},
	}}
	want.path = path
	// It sits beside the repository's policies folder, which decides for
	// it (besidePolicies).
	want.Policy.Dir = filepath.Join(filepath.Dir(path), "policies")
	ignoreYAML := cmpopts.IgnoreFields(Config{}, "doc") // the file as read, for Place
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(Config{}), cmpopts.EquateEmpty(), ignoreYAML); diff != "" {
		t.Errorf("config.example.yaml loaded differently from what it says (-want +got):\n%s", diff)
	}
}

// TestConfigDefaults: no --config and no mcpx-fw.yaml in the working folder
// gives setDefaults' values, paths resolved against the working folder.
func TestConfigDefaults(t *testing.T) {
	stateHome := configtest.CleanEnv(t)
	t.Chdir(t.TempDir())
	got, err := Load("")
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig(stateHome, wd)
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(Config{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

// TestConfigWorkingFolderFile: without --config, mcpx-fw.yaml in the
// working folder is read.
func TestConfigWorkingFolderFile(t *testing.T) {
	configtest.CleanEnv(t)
	path := configtest.WriteFile(t, "review:\n  timeout: 42s\n")
	t.Chdir(filepath.Dir(path))
	got, err := Load("")
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	if got.Review.Timeout != 42*time.Second {
		t.Errorf("review.timeout = %v, want 42s from ./mcpx-fw.yaml", got.Review.Timeout)
	}
}

// TestConfigErrors: every bad file fails, and the error names the key.
func TestConfigErrors(t *testing.T) {
	const server = "servers:\n  %s:\n    command: [cat]\n"
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the error
	}{
		{"unknown top-level key", "bogus: 1\n", []string{"bogus"}},
		{"unknown nested key", "policy:\n  dirr: x\n", []string{"dirr"}},
		{"unknown server key", "servers:\n  a:\n    command: [cat]\n    cmd: [cat]\n", []string{"cmd"}},
		{"negative policy timeout", "policy:\n  timeout: -1s\n", []string{"policy.timeout"}},
		{"unknown shadow key", "policy:\n  shadow:\n    dirr: x\n", []string{"policy.shadow.dirr"}},
		{"unknown shadow bundle key", "policy:\n  shadow:\n    bundle:\n      uri: x\n", []string{"policy.shadow.bundle.uri"}},
		{"zero shadow timeout", "policy:\n  shadow:\n    timeout: 0s\n", []string{"policy.shadow.timeout"}},
		{"shadow dir and bundle", "policy:\n  shadow:\n    dir: x\n    bundle:\n      url: https://b.example\n", []string{"policy.shadow", "both dir and bundle.url"}},
		{"shadow bundle over plain http", "policy:\n  shadow:\n    bundle:\n      url: http://b.example\n", []string{"policy.shadow.bundle"}},
		{"zero review timeout", "review:\n  timeout: 0s\n", []string{"review.timeout"}},
		{"review progress more often than a second", "review:\n  progress_interval: 500ms\n", []string{"review.progress_interval", "at least 1s"}},
		{"negative review progress", "review:\n  progress_interval: -1s\n", []string{"review.progress_interval"}},
		{"negative host timeout", "sampling:\n  host_timeout: -5m\n", []string{"sampling.host_timeout"}},
		{"replay without a byte bound", "replay:\n  keep: 72h\n  max_bytes: 0\n", []string{"replay.max_bytes"}},
		{"zero restart backoff", "restart:\n  backoff: 0s\n", []string{"restart.backoff"}},
		{"negative ping interval", "restart:\n  ping_interval: -1s\n", []string{"restart.ping_interval"}},
		{"restart max shorter than backoff", "restart:\n  backoff: 2m\n  max_backoff: 1m\n", []string{"restart.max_backoff: must not be shorter than restart.backoff"}},
		{"unparsable duration", "review:\n  timeout: soon\n", []string{"review.timeout"}},
		{"unknown policy default", "policy:\n  default: maybe\n", []string{"policy.default", "review, deny, permit"}},
		{"policy default misspelt", "policy:\n  default: reveiw\n", []string{`policy.default: want one of review, deny, permit, found "reveiw" (did you mean review?)`}},
		{"unknown log level", "log:\n  level: loud\n", []string{"log.level", "debug, info, warn, error"}},
		{"names prefix misspelt", "names:\n  prefix: allways\n", []string{`names.prefix: want one of auto, always, found "allways" (did you mean always?)`}},
		{"store url of another database", "store:\n  url: mysql://db/fw\n", []string{"store.url", "postgres://"}},
		{"store lease shorter than a second", "store:\n  lease: 100ms\n", []string{"store.lease", "at least 1s"}},
		{"zero store lease", "store:\n  lease: 0s\n", []string{"store.lease"}},
		{"server without command", "servers:\n  notes:\n    label: Notes\n", []string{"servers.notes.command"}},
		{"server with empty command", "servers:\n  notes:\n    command: [\"\"]\n", []string{"servers.notes.command"}},
		{"server with command and url", "servers:\n  web:\n    command: [cat]\n    url: https://example.com/mcp\n", []string{"servers.web", "not both"}},
		{"url that is not http", "servers:\n  web:\n    url: ftp://example.com/mcp\n", []string{"servers.web.url"}},
		{"url without a host", "servers:\n  web:\n    url: /mcp\n", []string{"servers.web.url"}},
		{"url server with env", "servers:\n  web:\n    url: https://example.com/mcp\n    env: {A: b}\n", []string{"servers.web.env"}},
		{"url server with dir", "servers:\n  web:\n    url: https://example.com/mcp\n    dir: x\n", []string{"servers.web.dir"}},
		{"headers on a command server", "servers:\n  a:\n    command: [cat]\n    headers: {X-A: b}\n", []string{"servers.a.headers"}},
		{"protocol header configured", "servers:\n  web:\n    url: https://example.com/mcp\n    headers: {Mcp-Session-Id: x}\n", []string{"servers.web.headers.mcp-session-id"}},
		{"header name with a space", "servers:\n  web:\n    url: https://example.com/mcp\n    headers: {\"X A\": b}\n", []string{"servers.web.headers: a header name holds a character"}},
		{"allow_remote not a bool", "http:\n  allow_remote: maybe\n", []string{"allow_remote"}},
		{"decision log service url not http", "decision_log:\n  service:\n    url: ftp://logs\n", []string{"decision_log.service.url"}},
		{"decision log service delay under a second", "decision_log:\n  service:\n    url: https://logs.example.com\n    min_delay: 500ms\n", []string{"decision_log.service.min_delay", "whole seconds"}},
		{"decision log service max delay under min", "decision_log:\n  service:\n    url: https://logs.example.com\n    min_delay: 2m\n    max_delay: 1m\n", []string{"decision_log.service.max_delay"}},
		{"decision log service empty buffer", "decision_log:\n  service:\n    url: https://logs.example.com\n    buffer_size_limit_events: 0\n", []string{"decision_log.service.buffer_size_limit_events"}},
		{"decision log service resource not a path", "decision_log:\n  service:\n    url: https://logs.example.com\n    resource: logs\n", []string{"decision_log.service.resource"}},
		{"decision log service sets content-encoding", "decision_log:\n  service:\n    url: https://logs.example.com\n    headers: {Content-Encoding: br}\n", []string{"decision_log.service.headers"}},
		{"server name with __", strings.ReplaceAll(server, "%s", "a__b"), []string{"servers.a__b"}},
		{"server name with +", strings.ReplaceAll(server, "%s", "a+b"), []string{"servers.a+b"}},
		{"server name ending in _test", strings.ReplaceAll(server, "%s", "notes_test"), []string{"servers.notes_test", "may not end in _test"}},
		{"server name starting with _", strings.ReplaceAll(server, "%s", "_a"), []string{"servers._a"}},
		{"negative max_tokens", "servers:\n  a:\n    command: [cat]\n    max_tokens: -1\n", []string{"servers.a.max_tokens"}},
		{"allowed host with a scheme", "servers:\n  a:\n    command: [cat]\n    elicitation: {allowed_hosts: [example.com, \"https://auth.example.com\", \"auth.example.com:443\", \"*.example.com\", \"\"]}\n",
			[]string{"allowed_hosts[1]", "allowed_hosts[2]", "allowed_hosts[3]", "allowed_hosts[4]"}},
		{"operator answer without sampling", "servers:\n  a:\n    command: [cat]\n    sampling: false\n    operator_answer: true\n", []string{"servers.a.operator_answer"}},
		{"unknown protocol", "servers:\n  a:\n    command: [cat]\n    protocol: 2027-01-01\n", []string{"servers.a.protocol", "auto, legacy", "2026-07-28"}},
		{"zero limit", "limits:\n  max_rounds: 0\n", []string{"limits.max_rounds", "positive"}},
		{"negative limit", "limits:\n  max_text_bytes: -1\n", []string{"limits.max_text_bytes"}},
		{"zero bridged calls", "limits:\n  max_bridged_calls_per_server: 0\n", []string{"limits.max_bridged_calls_per_server", "positive"}},
		{"zero bridge wait", "limits:\n  bridge_wait: 0s\n", []string{"limits.bridge_wait"}},
		{"zero in-flight limit", "limits:\n  max_in_flight: 0\n", []string{"limits.max_in_flight", "positive"}},
		{"held bytes below max_bytes", "limits:\n  max_held_bytes_per_host: 1000\n", []string{"limits.max_held_bytes_per_host", "limits.max_bytes"}},
		{"zero session cap", "http:\n  max_sessions: 0\n", []string{"http.max_sessions", "positive"}},
		{"negative read timeout", "http:\n  read_timeout: -1s\n", []string{"http.read_timeout"}},
		{"body cap not above max_bytes", "http:\n  max_body_bytes: 4194304\n", []string{"http.max_body_bytes", "limits.max_bytes"}},
		{"every problem at once", "policy:\n  default: maybe\nlog:\n  level: loud\n", []string{"policy.default", "log.level"}},
		{"unknown isolation default", "isolation:\n  default: chroot\n", []string{"isolation.default", "namespaces, none"}},
		{"a bare ~ in isolation.read_only", "isolation:\n  read_only: [~]\n", []string{"isolation.read_only", "YAML's null", `"~"`}},
		{"unknown server isolation", "servers:\n  a:\n    command: [cat]\n    isolation: jail\n", []string{"servers.a.isolation", "namespaces, none"}},
		{"isolation on a url server", "servers:\n  web:\n    url: https://example.com/mcp\n    isolation: none\n", []string{"servers.web.isolation", "command only"}},
		{"env name with =", "servers:\n  a:\n    command: [cat]\n    env: {\"A=B\": c}\n", []string{"servers.a.env: an environment name", "'='"}},
		{"bundle url not http", "policy:\n  bundle:\n    url: ftp://example.com\n", []string{"policy.bundle", "url", "http"}},
		{"bundle url without host", "policy:\n  bundle:\n    url: /bundles\n", []string{"policy.bundle", "url"}},
		{"bundle polling below a second", "policy:\n  bundle:\n    url: https://example.com\n    polling: {min_delay: 100ms, max_delay: 1s}\n", []string{"policy.bundle", "min_delay"}},
		{"bundle max delay below min", "policy:\n  bundle:\n    url: https://example.com\n    polling: {min_delay: 10s, max_delay: 5s}\n", []string{"policy.bundle", "max_delay"}},
		{"bundle key missing", "policy:\n  bundle:\n    url: https://example.com\n    signing: {public_key: /nonexistent/key.pem}\n", []string{"policy.bundle", "signing.public_key", "/nonexistent/key.pem"}},
		{"bundle key not PEM", "policy:\n  bundle:\n    url: https://example.com\n    signing: {public_key: mcpx-fw.yaml}\n", []string{"policy.bundle", "signing.public_key", "not PEM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			path := configtest.WriteFile(t, tt.content)
			_, err := Load(path)
			configtest.WantError(t, err, tt.want...)
			wantPlaced(t, err, path)
		})
	}
}

// decoderWords are what a config error must not show: Go's and
// mapstructure's words for what the user wrote.
var decoderWords = regexp.MustCompile(`mapstructure|decoding failed|invalid keys|config\.Config|main\.|expected type|unconvertible|\[\]string|time\.Duration`)

// wantPlaced fails the test unless each line of err is placed in the file
// at path (path:LINE: or path:) and free of decoder words.
func wantPlaced(t *testing.T, err error, path string) {
	t.Helper()
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if !strings.HasPrefix(line, path+":") || decoderWords.MatchString(line) {
			t.Errorf("error line %q is not placed in %s in the config's words", line, path)
		}
	}
}

// TestConfigEnvErrors: a bad MCPXFW_* value is checked like the file's,
// named by its key and placed at the variable.
func TestConfigEnvErrors(t *testing.T) {
	tests := []struct {
		env, value string
		want       string // the whole error
	}{
		{"MCPXFW_LOG_LEVEL", "loud", "MCPXFW_LOG_LEVEL: log.level: want one of debug, info, warn, error"},
		{"MCPXFW_POLICY_DEFAULT", "maybe", "MCPXFW_POLICY_DEFAULT: policy.default: want one of review, deny, permit"},
		{"MCPXFW_NAMES_PREFIX", "never", "MCPXFW_NAMES_PREFIX: names.prefix: want one of auto, always"},
		{"MCPXFW_REVIEW_TIMEOUT", "-1s", "MCPXFW_REVIEW_TIMEOUT: review.timeout: must be a positive duration such as 250ms or 10m"},
		{"MCPXFW_POLICY_TIMEOUT", "soon", "MCPXFW_POLICY_TIMEOUT: policy.timeout: want a duration such as 250ms or 10m, found a value that is not one"},
		{"MCPXFW_STORE_URL", "sqlite:///var/lib/fw.db", "MCPXFW_STORE_URL: store.url: must be empty (the SQLite file in state_dir) or a postgres:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			configtest.CleanEnv(t)
			t.Setenv(tt.env, tt.value)
			_, err := Load(configtest.WriteFile(t, ""))
			wantLines(t, err, []string{tt.want})
		})
	}
}

// TestConfigServerNamesFolded: viper folds keys to lower case, so a server
// written GitHub is the server github (and the policy package
// mcpxfw.servers.github); it cannot reach the policy with upper case.
func TestConfigServerNamesFolded(t *testing.T) {
	configtest.CleanEnv(t)
	cfg, err := Load(configtest.WriteFile(t, "servers:\n  GitHub:\n    command: [cat]\n"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, ok := cfg.Servers["github"]; !ok || len(cfg.Servers) != 1 {
		t.Errorf("servers = %v, want exactly github", cfg.ServerNames())
	}
}

// TestConfigOverrides covers the environment and path resolution.
func TestConfigOverrides(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "elsewhere")
	tests := []struct {
		name    string
		content string
		env     map[string]string
		check   func(t *testing.T, c *Config, base string)
	}{
		{"MCPXFW_STATE_DIR overrides state_dir", "state_dir: from-file\n",
			map[string]string{"MCPXFW_STATE_DIR": abs},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "state_dir", c.StateDir, abs) }},
		{"relative MCPXFW_STATE_DIR resolves against the config folder", "",
			map[string]string{"MCPXFW_STATE_DIR": "st"},
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "state_dir", c.StateDir, filepath.Join(base, "st"))
			}},
		{"MCPXFW_REVIEW_TIMEOUT overrides review.timeout", "review:\n  timeout: 1m\n",
			map[string]string{"MCPXFW_REVIEW_TIMEOUT": "30s"},
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "review.timeout", c.Review.Timeout, 30*time.Second)
			}},
		{"MCPXFW_POLICY_DIR overrides policy.dir", "",
			map[string]string{"MCPXFW_POLICY_DIR": abs},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "policy.dir", c.Policy.Dir, abs) }},
		{"MCPXFW_LOG_LEVEL overrides log.level", "",
			map[string]string{"MCPXFW_LOG_LEVEL": "debug"},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "log.level", c.Log.Level, "debug") }},
		{"relative policy.dir resolves against the config folder", "policy:\n  dir: rules\n", nil,
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "policy.dir", c.Policy.Dir, filepath.Join(base, "rules"))
			}},
		{"relative policy.shadow.dir and its bundle's key resolve against the config folder",
			"policy:\n  shadow:\n    dir: next\n    bundle:\n      signing:\n        public_key: k.pem\n", nil,
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "policy.shadow.dir", c.Policy.Shadow.Dir, filepath.Join(base, "next"))
				wantEqual(t, "policy.shadow.bundle.signing.public_key", c.Policy.Shadow.Bundle.Signing.PublicKey, filepath.Join(base, "k.pem"))
			}},
		{"MCPXFW_POLICY_SHADOW_DIR sets policy.shadow.dir", "",
			map[string]string{"MCPXFW_POLICY_SHADOW_DIR": abs},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "policy.shadow.dir", c.Policy.Shadow.Dir, abs) }},
		{"absolute policy.dir is kept", "policy:\n  dir: " + abs + "\n", nil,
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "policy.dir", c.Policy.Dir, abs) }},
		{"relative state_dir, sink, log file and server dir resolve too",
			"state_dir: st\ndecision_log:\n  sink: d.jsonl\nlog:\n  file: l.log\nservers:\n  a:\n    command: [cat]\n    dir: work\n", nil,
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "state_dir", c.StateDir, filepath.Join(base, "st"))
				wantEqual(t, "decision_log.sink", c.DecisionLog.Sink, filepath.Join(base, "d.jsonl"))
				wantEqual(t, "log.file", c.Log.File, filepath.Join(base, "l.log"))
				wantEqual(t, "servers.a.dir", c.Servers["a"].Dir, filepath.Join(base, "work"))
			}},
		{"sink words are not paths", "decision_log:\n  sink: \"off\"\n", nil,
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "decision_log.sink", c.DecisionLog.Sink, "off") }},
		{"MCPXFW_HTTP_ALLOW_REMOTE overrides http.allow_remote", "http:\n  allow_remote: false\n",
			map[string]string{"MCPXFW_HTTP_ALLOW_REMOTE": "true"},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "http.allow_remote", c.HTTP.AllowRemote, true) }},
		{"MCPXFW_ISOLATION_DEFAULT overrides isolation.default; isolation.hide and read_only resolve, ~ too",
			"isolation:\n  hide: [host.json, /abs/.ssh, ~/.aws]\n  read_only: [\"~\", ~/.config/direnv, rel, ~user/x]\n",
			map[string]string{"MCPXFW_ISOLATION_DEFAULT": "none", "HOME": "/home/op"},
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "isolation.default", c.Isolation.Default, "none")
				wantEqual(t, "isolation.hide", strings.Join(c.Isolation.Hide, " "), filepath.Join(base, "host.json")+" /abs/.ssh /home/op/.aws")
				wantEqual(t, "isolation.read_only", strings.Join(c.Isolation.ReadOnly, " "),
					"/home/op /home/op/.config/direnv "+filepath.Join(base, "rel")+" "+filepath.Join(base, "~user/x"))
			}},
		{"MCPXFW_LIMITS_MAX_PENDING_REVIEWS overrides limits.max_pending_reviews", "limits:\n  max_pending_reviews: 5\n",
			map[string]string{"MCPXFW_LIMITS_MAX_PENDING_REVIEWS": "7"},
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "limits.max_pending_reviews", c.Limits.Held.PendingReviews, 7)
			}},
		{"MCPXFW_LIMITS_MAX_HELD_BYTES_PER_HOST overrides limits.max_held_bytes_per_host", "",
			map[string]string{"MCPXFW_LIMITS_MAX_HELD_BYTES_PER_HOST": "33554432"},
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "limits.max_held_bytes_per_host", c.Limits.Held.HostHeldBytes, 32<<20)
			}},
		{"MCPXFW_HTTP_SESSION_TIMEOUT overrides http.session_timeout", "http:\n  session_timeout: 1h\n",
			map[string]string{"MCPXFW_HTTP_SESSION_TIMEOUT": "90s"},
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "http.session_timeout", c.HTTP.SessionTimeout, 90*time.Second)
			}},
		{"MCPXFW_HTTP_MAX_SESSIONS overrides http.max_sessions", "",
			map[string]string{"MCPXFW_HTTP_MAX_SESSIONS": "3"},
			func(t *testing.T, c *Config, _ string) { wantEqual(t, "http.max_sessions", c.HTTP.MaxSessions, 3) }},
		{"a dotted key is a path, as viper reads it", "policy.dir: rules\n", nil,
			func(t *testing.T, c *Config, base string) {
				wantEqual(t, "policy.dir", c.Policy.Dir, filepath.Join(base, "rules"))
			}},
		{"a YAML merge key brings an anchor's keys", "servers:\n  a: &a\n    command: [cat]\n    max_tokens: 7\n  b:\n    <<: *a\n    label: B\n", nil,
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "servers.b.command", strings.Join(c.Servers["b"].Command, " "), "cat")
				wantEqual(t, "servers.b.label", c.Servers["b"].Label, "B")
			}},
		{"an HTTP upstream with headers", "servers:\n  web:\n    url: https://example.com/mcp\n    headers: {Authorization: \"Bearer ${TOKEN}\"}\n", nil,
			func(t *testing.T, c *Config, _ string) {
				wantEqual(t, "servers.web.url", c.Servers["web"].URL, "https://example.com/mcp")
				wantEqual(t, "servers.web.headers.authorization", c.Servers["web"].Headers["authorization"], "Bearer ${TOKEN}")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			path := configtest.WriteFile(t, tt.content)
			t.Chdir(t.TempDir()) // the working folder must not matter
			c, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c, filepath.Dir(path))
		})
	}
}

func wantEqual[T comparable](t *testing.T, key string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", key, got, want)
	}
}

// TestConfigExampleDocumentsEveryKey walks the mapstructure tags of Config
// and Server, so config.example.yaml cannot fall behind the struct. A
// key counts as documented when it appears as "key:" at its place in the
// file's indentation, commented out or not (url is shown commented out).
func TestConfigExampleDocumentsEveryKey(t *testing.T) {
	b, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	documented := exampleKeys(string(b))
	for _, key := range structKeys(reflect.TypeFor[Config](), "") {
		if !documented[key] {
			t.Errorf("config.example.yaml does not document %s", key)
		}
	}
}

// structKeys lists the dotted mapstructure keys of a struct type; a map of
// structs contributes "<prefix>.*.<key>", and a squashed struct, embedded
// or named, its keys at the prefix.
func structKeys(typ reflect.Type, prefix string) []string {
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if opts == "squash" { // its keys are the section's own
			keys = append(keys, structKeys(f.Type, prefix)...)
			continue
		}
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		keys = append(keys, key)
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, structKeys(ft, key+".")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, structKeys(ft.Elem(), key+".*.")...)
		}
	}
	sort.Strings(keys)
	return keys
}

// exampleLine is a YAML mapping line, possibly commented out: indentation,
// then an optional "# ", then a lower-case key and a colon.
var exampleLine = regexp.MustCompile(`^( *)(?:# )?([a-z0-9_-]+):(?:\s|$)`)

// exampleKeys returns the dotted key paths of a YAML text by indentation,
// counting commented-out keys; names under servers become "*".
func exampleKeys(text string) map[string]bool {
	type level struct {
		indent int
		key    string
	}
	var stack []level
	keys := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		m := exampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, key := len(m[1]), m[2]
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 1 && stack[0].key == "servers" {
			key = "*"
		}
		stack = append(stack, level{indent, key})
		parts := make([]string, len(stack))
		for i, l := range stack {
			parts[i] = l.key
		}
		keys[strings.Join(parts, ".")] = true
	}
	return keys
}

// TestExpandHeaders: ${VAR} in a header value comes from the environment;
// nothing else is touched, and an error names the header and the variable
// but never a value, since header values are credentials.
func TestExpandHeaders(t *testing.T) {
	t.Setenv("MCPXFW_TEST_TOKEN", "s3cret")
	t.Setenv("MCPXFW_TEST_EMPTY", "")
	t.Setenv("MCPXFW_TEST_BREAK", "a\r\nInjected: yes")
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr []string
	}{
		{"plain value", "Bearer abc", "Bearer abc", nil},
		{"one variable", "Bearer ${MCPXFW_TEST_TOKEN}", "Bearer s3cret", nil},
		{"twice", "${MCPXFW_TEST_TOKEN}:${MCPXFW_TEST_TOKEN}", "s3cret:s3cret", nil},
		{"set but empty", "x${MCPXFW_TEST_EMPTY}y", "xy", nil},
		{"a bare dollar is literal", "p$a$$w${", "p$a$$w${", nil},
		{"unset variable", "Bearer ${MCPXFW_TEST_UNSET}", "", []string{"servers.web.headers.authorization", "${MCPXFW_TEST_UNSET} is not set"}},
		{"line break", "${MCPXFW_TEST_BREAK}", "", []string{"servers.web.headers.authorization", "line break"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHeaders("web", map[string]string{"authorization": tt.value})
			if tt.wantErr == nil {
				if err != nil || got["authorization"] != tt.want {
					t.Fatalf("ExpandHeaders(%q) = %q, %v; want %q", tt.value, got["authorization"], err, tt.want)
				}
				return
			}
			configtest.WantError(t, err, tt.wantErr...)
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "Injected") {
				t.Errorf("error shows a header value: %v", err)
			}
		})
	}
}

// TestConfigEnvKeepsCase: environment names reach the upstream as written,
// although every other key is case-folded.
func TestConfigEnvKeepsCase(t *testing.T) {
	configtest.CleanEnv(t)
	got, err := Load(configtest.WriteFile(t, "servers:\n  Notes:\n    command: [cat]\n    env: {API_KEY: a, Mixed_Case: b, lower: c}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"API_KEY": "a", "Mixed_Case": "b", "lower": "c"}
	if diff := cmp.Diff(want, got.Servers["notes"].Env); diff != "" {
		t.Errorf("servers.notes.env (-want +got):\n%s", diff)
	}
}

// TestConfigLogFileStderr: log.file: stderr means stderr, as it does for
// decision_log.sink, not a file named stderr beside the config.
func TestConfigLogFileStderr(t *testing.T) {
	configtest.CleanEnv(t)
	got, err := Load(configtest.WriteFile(t, "log:\n  file: stderr\ndecision_log:\n  sink: stderr\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Log.File != "stderr" || got.DecisionLog.Sink != "stderr" {
		t.Errorf("log.file %q, decision_log.sink %q: want both stderr", got.Log.File, got.DecisionLog.Sink)
	}
}

// TestConfigServerMaxTokensDefault: a server entry without max_tokens gets
// the safe default cap that config.example.yaml shows; an explicit 0 still
// means no cap.
func TestConfigServerMaxTokensDefault(t *testing.T) {
	configtest.CleanEnv(t)
	got, err := Load(configtest.WriteFile(t, "servers:\n  Quiet:\n    command: [cat]\n  open:\n    command: [cat]\n    max_tokens: 0\n  small:\n    command: [cat]\n    max_tokens: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"quiet": DefaultMaxTokens, "open": 0, "small": 100}
	for name, n := range want {
		if got.Servers[name].MaxTokens != n {
			t.Errorf("servers.%s.max_tokens = %d, want %d", name, got.Servers[name].MaxTokens, n)
		}
	}
	if DefaultMaxTokens != 4096 {
		t.Errorf("DefaultMaxTokens = %d; config.example.yaml documents 4096", DefaultMaxTokens)
	}
}

// TestExpandEnv: ${VAR} in a server's env comes from serve's environment,
// as in headers, so one server can be handed one secret; a line break is
// allowed there (a key in PEM form); an unset variable is named, never a
// value.
func TestExpandEnv(t *testing.T) {
	t.Setenv("MCPXFW_TEST_TOKEN", "s3cret")
	t.Setenv("MCPXFW_TEST_PEM", "-----BEGIN KEY-----\nabc\n-----END KEY-----")
	got, err := ExpandEnv("notes", map[string]string{"API_TOKEN": "${MCPXFW_TEST_TOKEN}", "KEY": "${MCPXFW_TEST_PEM}", "MODE": "fast"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"API_TOKEN": "s3cret", "KEY": "-----BEGIN KEY-----\nabc\n-----END KEY-----", "MODE": "fast"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandEnv (-want +got):\n%s", diff)
	}
	_, err = ExpandEnv("notes", map[string]string{"API_TOKEN": "${MCPXFW_TEST_UNSET}", "OTHER": "${MCPXFW_TEST_TOKEN}${MCPXFW_TEST_ALSO_UNSET}"})
	configtest.WantError(t, err, "servers.notes.env.API_TOKEN: ${MCPXFW_TEST_UNSET} is not set", "servers.notes.env.OTHER: ${MCPXFW_TEST_ALSO_UNSET} is not set")
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error shows a value: %v", err)
	}
}

// TestStoreURLErrorHidesPassword: a refused store.url is named by its key,
// never printed, since it may carry the database password.
func TestStoreURLErrorHidesPassword(t *testing.T) {
	configtest.CleanEnv(t)
	t.Setenv("MCPXFW_STORE_URL", "https://fw:hunter2@db.example/fw")
	_, err := Load(configtest.WriteFile(t, ""))
	configtest.WantError(t, err, "store.url")
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestPolicyDirBesideConfig: a config that names no policy.dir beside a
// policies folder of the operator's own decides with that folder, never
// passing it over for the shipped policies; without one, the shipped
// policies decide (policy.dir "").
func TestPolicyDirBesideConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "policies", "mcpxfw"), 0o755); err != nil {
		t.Fatal(err)
	}
	configtest.CleanEnv(t)
	path := filepath.Join(dir, "mcpx-fw.yaml")
	write := func(content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("servers:\n  notes:\n    command: [notes-server]\n")
	if c, err := Load(path); err != nil || c.Policy.Dir != filepath.Join(dir, "policies") {
		t.Fatalf("Load beside a policies folder = %v, %v; want that folder", c, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "policies")); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || c.Policy.Dir != "" {
		t.Fatalf("Load with no folder beside = %v, %v; want the shipped policies", c, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "policies", "mcpxfw"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("policy:\n  dir: policies\nservers:\n  notes:\n    command: [notes-server]\n")
	if c, err := Load(path); err != nil || c.Policy.Dir != filepath.Join(dir, "policies") {
		t.Fatalf("Load with policy.dir = %v, %v; want the folder", c, err)
	}
}
