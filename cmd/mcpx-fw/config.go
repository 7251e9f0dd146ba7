package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// Config is the whole configuration file. Every field has a default (see
// setDefaults and config.example.yaml); unknown keys are errors.
type Config struct {
	// StateDir holds the review queue. Default $XDG_STATE_HOME/mcpx-fw
	// (or ~/.local/state/mcpx-fw).
	StateDir string `mapstructure:"state_dir"`
	// Store is where the review queue, decisions, usage and audit log
	// live: the SQLite file in StateDir by default, or a PostgreSQL
	// database that several serve replicas share.
	Store struct {
		// URL is a postgres:// (or postgresql://) URL; "" keeps the
		// embedded SQLite file. MCPXFW_STORE_URL sets it without writing a
		// password into the config file.
		URL string `mapstructure:"url"`
		// Lease is how long a replica's claim on the reviews it waits on
		// lasts without renewal, on PostgreSQL: a replica that crashed has
		// its pending reviews abandoned by the others this long after its
		// last renewal (every third of it). Default 15s.
		Lease time.Duration `mapstructure:"lease"`
	} `mapstructure:"store"`
	// Seal is the key that seals the requestState given to 2026-07-28
	// hosts.
	Seal struct {
		// KeyFile is a key every serve replica behind one address shares
		// (made by the operator, 0600, at least 32 bytes), so a host's
		// retry can be resumed by any of them; "" keeps seal.key in
		// StateDir, made on first use.
		KeyFile string `mapstructure:"key_file"`
	} `mapstructure:"seal"`
	Policy struct {
		Dir     string        `mapstructure:"dir"`     // default "policies", relative to the config file
		Default string        `mapstructure:"default"` // outcome when no rule decides; default "review"
		Timeout time.Duration `mapstructure:"timeout"` // evaluation deadline; default 250ms
		Bundle  BundleConfig  `mapstructure:"bundle"`  // OPA bundles instead of dir; off by default
	} `mapstructure:"policy"`
	Review struct {
		Timeout time.Duration `mapstructure:"timeout"` // how long an escalation waits; default 10m
		// Retain is how long prompt and completion text of finished reviews
		// is kept; default 168h (7 days); 0 keeps it.
		Retain time.Duration `mapstructure:"retain"`
		// Notify announces each review serve opens (see notify.go).
		Notify NotifyConfig `mapstructure:"notify"`
	} `mapstructure:"review"`
	Sampling struct {
		HostTimeout time.Duration `mapstructure:"host_timeout"` // deadline for the host's answer; default 5m
	} `mapstructure:"sampling"`
	HTTP    HTTPConfig              `mapstructure:"http"`
	Console ConsoleConfig           `mapstructure:"console"`
	Metrics MetricsConfig           `mapstructure:"metrics"`
	Servers map[string]ServerConfig `mapstructure:"servers"`
	// Isolation is how stdio upstreams run (see isolation.go).
	Isolation struct {
		// Default is every command server's isolation unless it sets its
		// own: namespaces (Linux's default) or none (the default elsewhere).
		Default string `mapstructure:"default"`
		// Hide are more paths isolated upstreams cannot reach, besides the
		// firewall's own files; default none.
		Hide []string `mapstructure:"hide"`
		// ReadOnly are more paths isolated upstreams can read but not
		// change, besides the user's entry points (see isolation.go);
		// default none.
		ReadOnly []string `mapstructure:"read_only"`
	} `mapstructure:"isolation"`
	DecisionLog struct {
		Sink           string `mapstructure:"sink"`            // stderr | off | a file path; default stderr
		IncludeContent bool   `mapstructure:"include_content"` // default false
		// Service ships the same events to a service (see dlogservice.go).
		Service DecisionLogServiceConfig `mapstructure:"service"`
	} `mapstructure:"decision_log"`
	// Limits bound what one request may cost (see validate.Limits) and how
	// many input-request rounds one host call may take.
	Limits LimitsConfig `mapstructure:"limits"`
	Usage  struct {
		// Windows are named sliding windows input.usage reports besides
		// minute (1m) and hour (1h), which are always there; default none.
		Windows map[string]time.Duration `mapstructure:"windows"`
	} `mapstructure:"usage"`
	Tracing TracingConfig `mapstructure:"tracing"` // OpenTelemetry spans (tracing.go)
	Log     struct {
		Level string `mapstructure:"level"` // debug | info | warn | error; default info
		File  string `mapstructure:"file"`  // default stderr
	} `mapstructure:"log"`

	path string // the file it was read from, if any
}

// ServerConfig is one upstream server.
type ServerConfig struct {
	Command []string `mapstructure:"command"` // stdio command and arguments; or url
	URL     string   `mapstructure:"url"`     // streamable HTTP endpoint; or command
	// Headers go on every request to url (Authorization, say); ${VAR} in a
	// value is replaced from serve's environment when it starts.
	Headers map[string]string `mapstructure:"headers"`
	// Env is the command's own environment, added to the few variables
	// of serve's it gets (sandbox.Environ); ${VAR} in a value is replaced
	// from serve's environment when it starts.
	Env   map[string]string `mapstructure:"env"`
	Dir   string            `mapstructure:"dir"`   // working directory of the command
	Label string            `mapstructure:"label"` // shown to reviewers
	// Isolation overrides isolation.default for this command server:
	// namespaces or none; "" takes the default.
	Isolation string `mapstructure:"isolation"`
	// Protocol is the revision spoken to the server: auto (the host's,
	// default), legacy (never past 2025-11-25, for servers that push their
	// sampling), or one revision such as 2026-07-28.
	Protocol  string `mapstructure:"protocol"`
	MaxTokens int    `mapstructure:"max_tokens"` // cap policies enforce; default 4096 when the key is absent; 0 = none
	// Budget limits the server's use of sampling; policies read it as
	// data.mcpxfw.config.servers[name].budget. Default: no limits.
	Budget BudgetConfig `mapstructure:"budget"`
	// OperatorAnswer lets an operator write this server's completions
	// (mcpx-fw review answer), and offers it sampling even when the host
	// cannot sample; default false.
	OperatorAnswer bool `mapstructure:"operator_answer"`
	// Sampling offers the server sampling when the host can sample; false
	// never offers it (its sampling requests are refused). Default true
	// when the key is absent (applyRawServers).
	Sampling    bool              `mapstructure:"sampling"`
	Elicitation ElicitationConfig `mapstructure:"elicitation"`
	Roots       RootsConfig       `mapstructure:"roots"`
}

// ElicitationConfig is a server's elicitation: section.
type ElicitationConfig struct {
	// Enabled offers the server elicitation when the host declared it, in
	// the modes the host declared; default true when the key is absent.
	Enabled bool `mapstructure:"enabled"`
	// AllowedHosts are URL-mode hosts that need no review; policies read
	// them as data.mcpxfw.config.servers[name].elicitation.allowed_hosts.
	// Default none: every URL is reviewed.
	AllowedHosts []string `mapstructure:"allowed_hosts"`
}

// RootsConfig is a server's roots: section.
type RootsConfig struct {
	// Enabled offers the server roots when the host declared them; default
	// true when the key is absent.
	Enabled bool `mapstructure:"enabled"`
	// Allow are URI prefixes of the host's roots the server may see;
	// policies read them as data.mcpxfw.config.servers[name].roots.allow.
	// Default none: the host's list unchanged.
	Allow []string `mapstructure:"allow"`
}

// HTTPConfig is the http: section, for `serve --http`. Every key defaults
// to the value in config.example.yaml (relay.DefaultHTTPOptions).
type HTTPConfig struct {
	// AllowRemote lets `serve --http` listen on an address other
	// machines can reach; default false (loopback only).
	AllowRemote bool `mapstructure:"allow_remote"`
	// SessionTimeout closes a host session idle this long, and its
	// upstreams; default 30m.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	MaxSessions    int           `mapstructure:"max_sessions"`     // host sessions open at once; default 32
	ReadTimeout    time.Duration `mapstructure:"read_timeout"`     // to send one request's body; default 30s
	IdleTimeout    time.Duration `mapstructure:"idle_timeout"`     // keep-alive connection idle; default 2m
	MaxHeaderBytes int           `mapstructure:"max_header_bytes"` // one request's headers; default 64 KiB
	MaxBodyBytes   int           `mapstructure:"max_body_bytes"`   // one request's body; default 8 MiB
}

// MetricsConfig is the metrics: section: the operations listener serving
// /metrics, /healthz, /readyz and /status.
type MetricsConfig struct {
	// Addr is HOST:PORT to listen on; "" (the default) serves none.
	Addr string `mapstructure:"addr"`
	// AllowRemote lets Addr be an address other machines can reach;
	// default false (loopback only), as http.allow_remote.
	AllowRemote bool `mapstructure:"allow_remote"`
	// TokenFile holds the bearer token /metrics, each readiness check and
	// the full /status require (opstoken.go); "" (the default) requires
	// none. `mcpx-fw status` sends it from the same config.
	TokenFile string `mapstructure:"token_file"`
}

// check refuses an address that is not HOST:PORT, and one other machines
// could reach unless allow_remote: /status names the store, the policy
// files and the upstreams, which is nobody else's business.
func (m MetricsConfig) check(bad func(string, string, ...any)) {
	if m.Addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(m.Addr)
	switch {
	case err != nil:
		bad("metrics.addr", "%q is not HOST:PORT, such as 127.0.0.1:9464", m.Addr)
	case !m.AllowRemote && !relay.Loopback(host):
		bad("metrics.addr", "%s is not a loopback address, so other machines could read the metrics and status; "+
			"use 127.0.0.1 or localhost, or set metrics.allow_remote: true", m.Addr)
	}
}

// LimitsConfig is the limits: section. Every key defaults to the value in
// config.example.yaml (validate.DefaultLimits, defaultMaxRounds and
// relay.DefaultLimits).
type LimitsConfig struct {
	// MaxRounds caps the rounds of input requests (2026-07-28) or bridged
	// pushes in one host call.
	MaxRounds      int `mapstructure:"max_rounds"`
	MaxBytes       int `mapstructure:"max_bytes"`        // whole params or result
	MaxDepth       int `mapstructure:"max_depth"`        // JSON nesting
	MaxMessages    int `mapstructure:"max_messages"`     // messages in one request
	MaxBlocks      int `mapstructure:"max_blocks"`       // content blocks in one message
	MaxTextBytes   int `mapstructure:"max_text_bytes"`   // one text field
	MaxBase64Bytes int `mapstructure:"max_base64_bytes"` // one base64 field
	MaxTools       int `mapstructure:"max_tools"`        // tools offered in one request
	MaxFields      int `mapstructure:"max_fields"`       // fields of one elicitation form
	MaxEnumValues  int `mapstructure:"max_enum_values"`  // options of one form field
	MaxLabelBytes  int `mapstructure:"max_label_bytes"`  // one field name, title, option, root name
	MaxURLBytes    int `mapstructure:"max_url_bytes"`    // an elicitation URL
	MaxRoots       int `mapstructure:"max_roots"`        // roots in one list

	// Bridged calls (a 2026-07-28 host calling a server that pushes its
	// sampling) each hold an upstream session of their own, a process for
	// a stdio server, until they end: at most MaxBridgedCalls at once over
	// all servers and MaxBridgedCallsPerServer per server (more are refused
	// at once), each waiting at most BridgeWait for the host's retry.
	MaxBridgedCalls          int           `mapstructure:"max_bridged_calls"`
	MaxBridgedCallsPerServer int           `mapstructure:"max_bridged_calls_per_server"`
	BridgeWait               time.Duration `mapstructure:"bridge_wait"`
	// What one server may make the firewall hold at once, over all its
	// sessions (see relay.Limits): sampling requests in flight, pending
	// reviews, and the bytes of requests and completions held.
	MaxInFlight       int `mapstructure:"max_in_flight"`
	MaxPendingReviews int `mapstructure:"max_pending_reviews"`
	MaxHeldBytes      int `mapstructure:"max_held_bytes"`
	// The same for one server's share within one host session.
	MaxInFlightPerHost       int `mapstructure:"max_in_flight_per_host"`
	MaxPendingReviewsPerHost int `mapstructure:"max_pending_reviews_per_host"`
	MaxHeldBytesPerHost      int `mapstructure:"max_held_bytes_per_host"`
}

// defaultMaxRounds is limits.max_rounds unless configured: below the Go
// SDK client's own cap of 10 attempts per call, so a host hears the
// firewall's clear message rather than its own.
const defaultMaxRounds = 8

// BudgetConfig is one server's budget. Zero means no limit of that kind
// (the key is then absent from the policy's data).
type BudgetConfig struct {
	// HourlyTokens: a request whose prompt (its estimated tokens) and
	// maxTokens would take the server past this many tokens in the last
	// hour is denied (budget-exhausted).
	HourlyTokens int `mapstructure:"hourly_tokens"`
	// BurstPerMinute: a request arriving after this many in the last minute
	// is held for review (burst).
	BurstPerMinute int `mapstructure:"burst_per_minute"`
}

// defaultConfigFile is read when --config is not given, if it exists.
const defaultConfigFile = "mcpx-fw.yaml"

func setDefaults(v *viper.Viper) {
	v.SetDefault("state_dir", "")
	v.SetDefault("store.url", "")
	v.SetDefault("store.lease", review.DefaultLease.String())
	v.SetDefault("seal.key_file", "")
	v.SetDefault("policy.dir", "policies")
	v.SetDefault("policy.default", "review")
	v.SetDefault("policy.timeout", "250ms")
	setBundleDefaults(v)
	v.SetDefault("review.timeout", "10m")
	v.SetDefault("review.retain", "168h")
	setNotifyDefaults(v)
	v.SetDefault("console.addr", defaultConsoleAddr)
	v.SetDefault("console.allow_remote", false)
	v.SetDefault("sampling.host_timeout", "5m")
	v.SetDefault("http.allow_remote", false)
	httpd := relay.DefaultHTTPOptions()
	v.SetDefault("http.session_timeout", httpd.SessionTimeout.String())
	v.SetDefault("http.max_sessions", httpd.MaxSessions)
	v.SetDefault("http.read_timeout", httpd.ReadTimeout.String())
	v.SetDefault("http.idle_timeout", httpd.IdleTimeout.String())
	v.SetDefault("http.max_header_bytes", httpd.MaxHeaderBytes)
	v.SetDefault("http.max_body_bytes", httpd.MaxBodyBytes)
	v.SetDefault("metrics.addr", "")
	v.SetDefault("metrics.allow_remote", false)
	v.SetDefault("metrics.token_file", "")
	v.SetDefault("servers", map[string]any{})
	v.SetDefault("isolation.default", defaultIsolation())
	v.SetDefault("isolation.hide", []string{})
	v.SetDefault("isolation.read_only", []string{})
	v.SetDefault("decision_log.sink", "stderr")
	v.SetDefault("decision_log.include_content", false)
	setDecisionLogServiceDefaults(v)
	v.SetDefault("usage.windows", map[string]any{})
	lim := validate.DefaultLimits()
	v.SetDefault("limits.max_rounds", defaultMaxRounds)
	v.SetDefault("limits.max_bytes", lim.MaxBytes)
	v.SetDefault("limits.max_depth", lim.MaxDepth)
	v.SetDefault("limits.max_messages", lim.MaxMessages)
	v.SetDefault("limits.max_blocks", lim.MaxBlocks)
	v.SetDefault("limits.max_text_bytes", lim.MaxTextBytes)
	v.SetDefault("limits.max_base64_bytes", lim.MaxBase64Bytes)
	v.SetDefault("limits.max_tools", lim.MaxTools)
	v.SetDefault("limits.max_fields", lim.MaxFields)
	v.SetDefault("limits.max_enum_values", lim.MaxEnumValues)
	v.SetDefault("limits.max_label_bytes", lim.MaxLabelBytes)
	v.SetDefault("limits.max_url_bytes", lim.MaxURLBytes)
	v.SetDefault("limits.max_roots", lim.MaxRoots)
	v.SetDefault("limits.max_bridged_calls", relay.DefaultMaxBridged)
	v.SetDefault("limits.max_bridged_calls_per_server", relay.DefaultMaxBridgedPerServer)
	v.SetDefault("limits.bridge_wait", relay.DefaultBridgeWait.String())
	held := relay.DefaultLimits()
	v.SetDefault("limits.max_in_flight", held.InFlight)
	v.SetDefault("limits.max_pending_reviews", held.PendingReviews)
	v.SetDefault("limits.max_held_bytes", held.HeldBytes)
	v.SetDefault("limits.max_in_flight_per_host", held.HostInFlight)
	v.SetDefault("limits.max_pending_reviews_per_host", held.HostPendingReviews)
	v.SetDefault("limits.max_held_bytes_per_host", held.HostHeldBytes)
	setTracingDefaults(v)
	v.SetDefault("log.level", "info")
	v.SetDefault("log.file", "")
}

// loadConfig reads path (or mcpx-fw.yaml in the working folder when path is
// empty and that file exists), applies MCPXFW_* environment overrides and
// checks every field, reporting all problems at once.
func loadConfig(path string) (*Config, error) {
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix("MCPXFW")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		}
	}
	if path != "" {
		if err := readConfigFile(v, path); err != nil {
			return nil, err
		}
	}
	var cfg Config
	if err := v.UnmarshalExact(&cfg, viper.DecodeHook(decodeHooks())); err != nil {
		return nil, fmt.Errorf("config %s: %w", displayPath(path), err)
	}
	cfg.path = path
	if err := cfg.applyRawServers(); err != nil {
		return nil, err
	}
	cfg.resolvePaths()
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("config %s: %w", displayPath(path), err)
	}
	return &cfg, nil
}

// decodeHooks are viper's own (durations, comma-separated lists) plus one
// for revisions: YAML reads an unquoted 2026-07-28 as a date, which a
// string field such as servers.<name>.protocol takes back as written.
func decodeHooks() mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
		dateAsString,
	)
}

func dateAsString(from, to reflect.Type, data any) (any, error) {
	if t, ok := data.(time.Time); ok && to.Kind() == reflect.String {
		return t.Format(time.DateOnly), nil
	}
	return data, nil
}

func readConfigFile(v *viper.Viper, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

func displayPath(p string) string {
	if p == "" {
		return "(defaults)"
	}
	return p
}

// resolvePaths makes relative paths relative to the config file's folder,
// so a config works from any working directory.
func (c *Config) resolvePaths() {
	base := "."
	if c.path != "" {
		base = filepath.Dir(c.path)
	}
	c.Policy.Dir = resolve(base, c.Policy.Dir)
	if c.Policy.Bundle.Signing.PublicKey != "" {
		c.Policy.Bundle.Signing.PublicKey = resolve(base, c.Policy.Bundle.Signing.PublicKey)
	}
	if c.StateDir == "" {
		c.StateDir = defaultStateDir()
	} else {
		c.StateDir = resolve(base, c.StateDir)
	}
	if c.Seal.KeyFile != "" {
		c.Seal.KeyFile = resolve(base, c.Seal.KeyFile)
	}
	if c.Metrics.TokenFile != "" {
		c.Metrics.TokenFile = resolve(base, c.Metrics.TokenFile)
	}
	if s := c.DecisionLog.Sink; s != "stderr" && s != "off" && s != "" {
		c.DecisionLog.Sink = resolve(base, s)
	}
	if c.Log.File != "" && c.Log.File != "stderr" { // openSink takes "stderr" as stderr
		c.Log.File = resolve(base, c.Log.File)
	}
	for name, s := range c.Servers {
		if s.Dir != "" {
			s.Dir = resolve(base, s.Dir)
			c.Servers[name] = s
		}
	}
	for _, paths := range [][]string{c.Isolation.Hide, c.Isolation.ReadOnly} {
		for i, p := range paths {
			if p != "" { // empty is an error: check
				paths[i] = resolve(base, expandHome(p))
			}
		}
	}
}

// expandHome replaces a leading ~ (alone or before a /) with the home
// folder, as a shell does; any other path is left as it is, and so is this
// one when there is no home.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	abs, err := filepath.Abs(filepath.Join(base, p))
	if err != nil {
		return p
	}
	return abs
}

func defaultStateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "mcpx-fw")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "mcpx-fw-state")
	}
	return filepath.Join(home, ".local", "state", "mcpx-fw")
}

// serverName is what a server may be called: policies key on it, and the
// relay prefixes tool names with it and "__".
var serverName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*(_[a-z0-9-]+)*$`)

// check validates every field and names each bad key.
// minStoreLease is the shortest store.lease: a replica renews its lease
// every third of it, and one that misses renewals for the whole lease
// (a database failover, a long pause) has its pending reviews abandoned
// by the others, however alive it is.
const minStoreLease = time.Second

func (c *Config) check() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if !oneOf(c.Policy.Default, "review", "deny", "permit") {
		bad("policy.default", "%q is not one of review, deny, permit", c.Policy.Default)
	}
	if u, err := url.Parse(c.Store.URL); c.Store.URL != "" && (err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql")) {
		bad("store.url", "must be empty (the SQLite file in state_dir) or a postgres:// URL")
	}
	if c.Store.Lease < minStoreLease {
		bad("store.lease", "must be at least %v: a shorter lease is renewed several times a second and runs out at any pause of the database, when the other replicas abandon this one's reviews", minStoreLease)
	}
	positive(bad, "policy.timeout", c.Policy.Timeout)
	c.Policy.Bundle.check(bad)
	positive(bad, "review.timeout", c.Review.Timeout)
	if c.Review.Retain < 0 {
		bad("review.retain", "must be 0 (keep) or a positive duration such as 168h")
	}
	c.Review.Notify.check(bad)
	positive(bad, "sampling.host_timeout", c.Sampling.HostTimeout)
	if !oneOf(c.Log.Level, "debug", "info", "warn", "error") {
		bad("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	if _, err := engine.UsageWindows(c.Usage.Windows); err != nil {
		bad("usage.windows", "%v", err)
	}
	c.Limits.check(bad)
	if !oneOf(c.Isolation.Default, isolationModes...) {
		bad("isolation.default", "%q is not one of %s", c.Isolation.Default, strings.Join(isolationModes, ", "))
	}
	for key, paths := range map[string][]string{"isolation.hide": c.Isolation.Hide, "isolation.read_only": c.Isolation.ReadOnly} {
		if slices.Contains(paths, "") {
			bad(key, "an entry is empty (a bare ~ is YAML's null: quote it, \"~\")")
		}
	}
	c.HTTP.check(bad, c.Limits.MaxBytes)
	c.DecisionLog.Service.check(bad)
	c.Metrics.check(bad)
	c.Tracing.check(bad)
	for name, s := range c.Servers {
		c.checkServer(bad, name, s)
	}
	return errors.Join(errs...)
}

func (c *Config) checkServer(bad func(string, string, ...any), name string, s ServerConfig) {
	key := "servers." + name
	if !serverName.MatchString(name) || strings.Contains(name, "__") {
		bad(key, "server names are lower-case letters, digits, '-' and single '_'")
	}
	checkReach(bad, key, s)
	if !oneOf(s.Protocol, "", "auto", "legacy") && !slices.Contains(relay.Revisions(), s.Protocol) {
		bad(key+".protocol", "%q is not auto, legacy or one of %s", s.Protocol, strings.Join(relay.Revisions(), ", "))
	}
	if s.MaxTokens < 0 {
		bad(key+".max_tokens", "must be 0 (no cap) or positive")
	}
	if s.Budget.HourlyTokens < 0 {
		bad(key+".budget.hourly_tokens", "must be 0 (no budget) or positive")
	}
	if s.Budget.BurstPerMinute < 0 {
		bad(key+".budget.burst_per_minute", "must be 0 (no limit) or positive")
	}
	if s.OperatorAnswer && !s.Sampling {
		bad(key+".operator_answer", "answers sampling, which sampling: false never offers this server; drop one of them")
	}
	for i, h := range s.Elicitation.AllowedHosts {
		checkAllowedHost(bad, fmt.Sprintf("%s.elicitation.allowed_hosts[%d]", key, i), h)
	}
}

// checkAllowedHost refuses an allowed_hosts entry that is not a bare host
// name. The policy compares an entry with the URL's host alone, so a
// scheme, port, path or wildcard never matches, and an empty one names no
// host: the operator meant something the firewall would silently not do.
func checkAllowedHost(bad func(string, string, ...any), key, h string) {
	_, _, portErr := net.SplitHostPort(h)
	if h == "" || portErr == nil || strings.ContainsAny(h, "/@*?# \t") {
		bad(key, "%q is not a host name: write the host alone (auth.example.com), without scheme, port, path or wildcard", h)
	}
}

// checkReach checks how the firewall reaches a server: by exactly one of a
// command (stdio) or a url (streamable HTTP), with only the keys that apply
// to it.
func checkReach(bad func(string, string, ...any), key string, s ServerConfig) {
	switch {
	case s.URL != "" && len(s.Command) > 0:
		bad(key, "set command (a stdio server) or url (an HTTP server), not both")
	case s.URL != "":
		checkURL(bad, key+".url", s.URL)
		if len(s.Env) > 0 {
			bad(key+".env", "applies to command only; an HTTP server's environment is its own")
		}
		if s.Dir != "" {
			bad(key+".dir", "applies to command only")
		}
		if s.Isolation != "" {
			bad(key+".isolation", "applies to command only; an HTTP server runs elsewhere")
		}
	case len(s.Command) == 0 || s.Command[0] == "":
		bad(key+".command", "required: the command that starts the server (or url for an HTTP server)")
	}
	if len(s.Headers) > 0 && s.URL == "" {
		bad(key+".headers", "applies to url only")
	}
	if s.Isolation != "" && !oneOf(s.Isolation, isolationModes...) {
		bad(key+".isolation", "%q is not one of %s (or empty for isolation.default)", s.Isolation, strings.Join(isolationModes, ", "))
	}
	for name, value := range s.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") || strings.Contains(value, "\x00") {
			bad(key+".env."+name, "an environment name has no '=' or NUL, and a value no NUL")
		}
	}
	for name := range s.Headers {
		checkHeaderName(bad, key+".headers."+name, name)
	}
}

// check refuses limits that are not positive: a zero would not mean "no
// limit" but forbid everything. A byte budget below max_bytes would
// refuse requests that validation lets through.
func (l LimitsConfig) check(bad func(string, string, ...any)) {
	for key, v := range map[string]int{"max_rounds": l.MaxRounds, "max_bytes": l.MaxBytes, "max_depth": l.MaxDepth,
		"max_messages": l.MaxMessages, "max_blocks": l.MaxBlocks, "max_text_bytes": l.MaxTextBytes,
		"max_base64_bytes": l.MaxBase64Bytes, "max_tools": l.MaxTools,
		"max_fields": l.MaxFields, "max_enum_values": l.MaxEnumValues, "max_label_bytes": l.MaxLabelBytes,
		"max_url_bytes": l.MaxURLBytes, "max_roots": l.MaxRoots,
		"max_in_flight": l.MaxInFlight, "max_pending_reviews": l.MaxPendingReviews, "max_held_bytes": l.MaxHeldBytes,
		"max_in_flight_per_host": l.MaxInFlightPerHost, "max_pending_reviews_per_host": l.MaxPendingReviewsPerHost,
		"max_held_bytes_per_host": l.MaxHeldBytesPerHost} {
		if v <= 0 {
			bad("limits."+key, "must be positive")
		}
	}
	for key, v := range map[string]int{"max_bridged_calls": l.MaxBridgedCalls, "max_bridged_calls_per_server": l.MaxBridgedCallsPerServer} {
		if v <= 0 {
			bad("limits."+key, "must be positive")
		}
	}
	positive(bad, "limits.bridge_wait", l.BridgeWait)
	for key, v := range map[string]int{"max_held_bytes": l.MaxHeldBytes, "max_held_bytes_per_host": l.MaxHeldBytesPerHost} {
		if v > 0 && l.MaxBytes > 0 && v < l.MaxBytes {
			bad("limits."+key, "%d is below limits.max_bytes (%d): a request of the largest size allowed could never be held", v, l.MaxBytes)
		}
	}
}

// relayLimits is what the relay holds for upstreams.
func (l LimitsConfig) relayLimits() relay.Limits {
	return relay.Limits{InFlight: l.MaxInFlight, PendingReviews: l.MaxPendingReviews, HeldBytes: int64(l.MaxHeldBytes),
		HostInFlight: l.MaxInFlightPerHost, HostPendingReviews: l.MaxPendingReviewsPerHost, HostHeldBytes: int64(l.MaxHeldBytesPerHost)}
}

// check refuses HTTP limits that are not positive, and a body cap below
// limits.max_bytes, which would refuse a host's answer that validation
// lets through.
func (h HTTPConfig) check(bad func(string, string, ...any), maxBytes int) {
	positive(bad, "http.session_timeout", h.SessionTimeout)
	positive(bad, "http.read_timeout", h.ReadTimeout)
	positive(bad, "http.idle_timeout", h.IdleTimeout)
	for key, v := range map[string]int{"max_sessions": h.MaxSessions, "max_header_bytes": h.MaxHeaderBytes, "max_body_bytes": h.MaxBodyBytes} {
		if v <= 0 {
			bad("http."+key, "must be positive")
		}
	}
	if h.MaxBodyBytes > 0 && maxBytes > 0 && h.MaxBodyBytes <= maxBytes {
		bad("http.max_body_bytes", "%d is not above limits.max_bytes (%d): a host's answer of the largest size allowed would be refused", h.MaxBodyBytes, maxBytes)
	}
}

// relayHTTP is the relay's view of the http: section.
func (h HTTPConfig) relayHTTP() relay.HTTPOptions {
	return relay.HTTPOptions{SessionTimeout: h.SessionTimeout, MaxSessions: h.MaxSessions, ReadTimeout: h.ReadTimeout,
		IdleTimeout: h.IdleTimeout, MaxHeaderBytes: h.MaxHeaderBytes, MaxBodyBytes: int64(h.MaxBodyBytes)}
}

// validateLimits is the structural part of the limits, for the engine.
func (l LimitsConfig) validateLimits() validate.Limits {
	return validate.Limits{MaxBytes: l.MaxBytes, MaxDepth: l.MaxDepth, MaxMessages: l.MaxMessages, MaxBlocks: l.MaxBlocks,
		MaxTextBytes: l.MaxTextBytes, MaxBase64Bytes: l.MaxBase64Bytes, MaxTools: l.MaxTools,
		MaxFields: l.MaxFields, MaxEnumValues: l.MaxEnumValues, MaxLabelBytes: l.MaxLabelBytes,
		MaxURLBytes: l.MaxURLBytes, MaxRoots: l.MaxRoots}
}

func checkURL(bad func(string, string, ...any), key, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key, "%q is not an http:// or https:// URL such as https://example.com/mcp", raw)
	}
}

// headerName is an HTTP field name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// checkHeaderName refuses names that are not HTTP field names, and those
// the transport sets itself: overriding them would break the session.
func checkHeaderName(bad func(string, string, ...any), key, name string) {
	lower := strings.ToLower(name)
	switch {
	case !headerName.MatchString(name):
		bad(key, "%q is not an HTTP header name", name)
	case strings.HasPrefix(lower, "mcp-") || oneOf(lower, "accept", "content-type", "content-length", "host", "last-event-id", "connection", "transfer-encoding"):
		bad(key, "%s is set by the MCP transport and cannot be configured", name)
	}
}

// configVar is a ${VAR} reference in a header or env value.
var configVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandHeaders replaces every ${VAR} in the header values with VAR from
// the environment; a value must not hold a line break once expanded.
func expandHeaders(server string, headers map[string]string) (map[string]string, error) {
	return expandHeaderValues("servers."+server+".headers.", headers)
}

// expandEnv replaces every ${VAR} in a command server's env values with VAR
// from the environment: the way to hand one server one of serve's secrets.
func expandEnv(server string, env map[string]string) (map[string]string, error) {
	return expandVars("servers."+server+".env.", env)
}

// expandVars replaces each ${VAR} in the values. Errors name the key and
// the variable, never a value: these are credentials.
func expandVars(prefix string, values map[string]string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(values)) {
		out[name] = configVar.ReplaceAllStringFunc(values[name], func(ref string) string {
			val, ok := os.LookupEnv(ref[2 : len(ref)-1])
			if !ok {
				errs = append(errs, fmt.Errorf("%s%s: %s is not set in the environment", prefix, name, ref))
			}
			return val
		})
	}
	return out, errors.Join(errs...)
}

func positive(bad func(string, string, ...any), key string, d time.Duration) {
	if d <= 0 {
		bad(key, "must be a positive duration such as 250ms or 10m")
	}
}

func oneOf(s string, words ...string) bool {
	for _, w := range words {
		if s == w {
			return true
		}
	}
	return false
}
