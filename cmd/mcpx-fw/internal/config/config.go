package config

import (
	"maps"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

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
		Dir     string        `mapstructure:"dir"`     // relative to the config file; unset: the shipped policies embedded in the binary
		Default string        `mapstructure:"default"` // outcome when no rule decides; default "review"
		Timeout time.Duration `mapstructure:"timeout"` // evaluation deadline; default 250ms
		Bundle  Bundle        `mapstructure:"bundle"`  // OPA bundles instead of dir; off by default
		Shadow  Shadow        `mapstructure:"shadow"`  // a candidate policy judged beside the active one, never enforced; off by default
	} `mapstructure:"policy"`
	Review struct {
		Timeout time.Duration `mapstructure:"timeout"` // how long an escalation waits; default 10m
		// Retain is how long prompt and completion text of finished reviews
		// is kept; default 168h (7 days); 0 keeps it.
		Retain time.Duration `mapstructure:"retain"`
		// ProgressInterval is how often a host call a review holds gets
		// progress, when its host asked for progress, so that a host
		// resetting its timeout on progress keeps waiting; default 10s, at
		// least 1s; 0 sends none.
		ProgressInterval time.Duration `mapstructure:"progress_interval"`
		// Notify announces each review serve opens (Notify).
		Notify Notify `mapstructure:"notify"`
	} `mapstructure:"review"`
	// Restart is how a server that is down (it failed to start, or its
	// connection was lost, or it stopped answering pings) is started again:
	// backoff (default 1s), doubled after each failed try, up to max_backoff
	// (default 1m); ping_interval (default 30s).
	Restart  relay.RestartOptions `mapstructure:"restart"`
	Sampling struct {
		HostTimeout time.Duration `mapstructure:"host_timeout"` // deadline for the host's answer; default 5m
	} `mapstructure:"sampling"`
	HTTP    HTTP              `mapstructure:"http"`
	Console Console           `mapstructure:"console"`
	Metrics Metrics           `mapstructure:"metrics"`
	Servers map[string]Server `mapstructure:"servers"`
	Names   struct {
		// Prefix is when tool and prompt names carry their server's name
		// (<server>__<name>): auto, when serve serves several servers;
		// always, even one, so names stay the same when a server is added.
		// serve --server NAME serves its one server unprefixed either way.
		Prefix string `mapstructure:"prefix"`
	} `mapstructure:"names"`
	// Isolation is how stdio upstreams run (cmd/mcpx-fw's isolation.go
	// plans it).
	Isolation struct {
		// Default is every command server's isolation unless it sets its
		// own: namespaces (Linux's default) or none (the default elsewhere).
		Default string `mapstructure:"default"`
		// Hide are more paths isolated upstreams cannot reach, besides the
		// firewall's own files; default none.
		Hide []string `mapstructure:"hide"`
		// ReadOnly are more paths isolated upstreams can read but not
		// change, besides the user's entry points (sandbox.OperatorPaths);
		// default none.
		ReadOnly []string `mapstructure:"read_only"`
	} `mapstructure:"isolation"`
	DecisionLog struct {
		Sink           string `mapstructure:"sink"`            // stderr | off | a file path; default stderr
		IncludeContent bool   `mapstructure:"include_content"` // default false
		// Service ships the same events to a service (DecisionLogService).
		Service DecisionLogService `mapstructure:"service"`
	} `mapstructure:"decision_log"`
	// Limits bound what one request may cost (see validate.Limits) and how
	// many input-request rounds one host call may take.
	Limits Limits `mapstructure:"limits"`
	// Replay is what the store keeps for `mcpx-fw policy replay`.
	Replay struct {
		// Keep is how long each decision's policy input (prompt and form
		// text included) is kept; default 0, none: an upstream's text stays
		// out of the store until an operator asks for replay.
		Keep time.Duration `mapstructure:"keep"`
		// MaxBytes bounds what the kept inputs take in the store, however
		// fast an upstream sends: past it the oldest inputs of the server
		// whose inputs take the most are deleted first, whatever their
		// age; default 256 MiB.
		MaxBytes int64 `mapstructure:"max_bytes"`
	} `mapstructure:"replay"`
	Usage struct {
		// Windows are named sliding windows input.usage reports besides
		// minute (1m) and hour (1h), which are always there; default none.
		Windows map[string]time.Duration `mapstructure:"windows"`
	} `mapstructure:"usage"`
	Tracing Tracing `mapstructure:"tracing"` // OpenTelemetry spans (Tracing)
	Log     struct {
		Level string `mapstructure:"level"` // debug | info | warn | error; default info
		File  string `mapstructure:"file"`  // default stderr
	} `mapstructure:"log"`

	path string     // the file it was read from, if any
	doc  *yaml.Node // its YAML, whose nodes know their lines (Place); nil when none
	// policyDirGiven: the file names policy.dir, so an empty one is a
	// mistake rather than the default.
	policyDirGiven bool
}

// Server is one upstream server.
type Server struct {
	Command []string `mapstructure:"command"` // stdio command and arguments; or url
	// Args follow Command, as a host's own config writes a server
	// (command: npx, args: [-y, pkg]); Load appends them to Command, so
	// after Load it is empty.
	Args []string `mapstructure:"args"`
	URL  string   `mapstructure:"url"` // streamable HTTP endpoint; or command
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
	Budget Budget `mapstructure:"budget"`
	// OperatorAnswer lets an operator write this server's completions
	// (mcpx-fw review answer), and offers it sampling even when the host
	// cannot sample; default false.
	OperatorAnswer bool `mapstructure:"operator_answer"`
	// Sampling offers the server sampling when the host can sample; false
	// never offers it (its sampling requests are refused). Default true
	// when the key is absent (applyRawServers).
	Sampling bool `mapstructure:"sampling"`
	// Elicitation is what the server may ask the user through the host;
	// enabled defaults to true when the key is absent (applyRawServers).
	Elicitation relay.ElicitationConfig `mapstructure:"elicitation"`
	// Roots is what the server may learn of the host's roots; enabled
	// defaults to true when the key is absent (applyRawServers).
	Roots relay.RootsConfig `mapstructure:"roots"`
}

// HTTP is the http: section, for `serve --http`. Every key defaults
// to the value in config.example.yaml.
type HTTP struct {
	// AllowRemote lets `serve --http` listen on an address other
	// machines can reach; default false (loopback only).
	AllowRemote bool `mapstructure:"allow_remote"`
	// The rest are the relay's own options, keyed by their tags; defaults
	// (relay.DefaultHTTPOptions): session_timeout 30m (a host session idle
	// this long is closed, and its upstreams), max_sessions 32 (host
	// sessions open at once), read_timeout 30s (to send one request's
	// body), idle_timeout 2m (a keep-alive connection), max_header_bytes
	// 64 KiB and max_body_bytes 8 MiB (one request's).
	relay.HTTPOptions `mapstructure:",squash"`
}

// Metrics is the metrics: section: the operations listener serving
// /metrics, /healthz, /readyz and /status.
type Metrics struct {
	// Addr is HOST:PORT to listen on; "" (the default) serves none.
	Addr string `mapstructure:"addr"`
	// AllowRemote lets Addr be an address other machines can reach;
	// default false (loopback only), as http.allow_remote.
	AllowRemote bool `mapstructure:"allow_remote"`
	// TokenFile holds the bearer token /metrics, each readiness check and
	// the full /status require (cmd/mcpx-fw's opstoken.go); "" (the default) requires
	// none. `mcpx-fw status` sends it from the same config.
	TokenFile string `mapstructure:"token_file"`
}

// Limits is the limits: section. Every key defaults to the value in
// config.example.yaml (validate.DefaultLimits, defaultMaxRounds and
// relay.DefaultLimits).
type Limits struct {
	// MaxRounds caps the rounds of input requests (2026-07-28) or bridged
	// pushes in one host call.
	MaxRounds int `mapstructure:"max_rounds"`
	// The structural caps of one request or result: max_bytes through
	// max_roots, keyed by validate.Limits' tags, which say each one's
	// meaning and default.
	validate.Limits `mapstructure:",squash"`

	// Bridged calls (a 2026-07-28 host calling a server that pushes its
	// sampling) each hold an upstream session of their own, a process for
	// a stdio server, until they end: at most MaxBridgedCalls at once over
	// all servers and MaxBridgedCallsPerServer per server (more are refused
	// at once), each waiting at most BridgeWait for the host's retry.
	MaxBridgedCalls          int           `mapstructure:"max_bridged_calls"`
	MaxBridgedCallsPerServer int           `mapstructure:"max_bridged_calls_per_server"`
	BridgeWait               time.Duration `mapstructure:"bridge_wait"`
	// Held is what one server may make the firewall hold at once, over all
	// its sessions and within one host session: max_in_flight through
	// max_held_bytes_per_host, keyed by relay.Limits' tags, the type the
	// relay enforces.
	Held relay.Limits `mapstructure:",squash"`
}

// defaultMaxRounds is limits.max_rounds unless configured: below the Go
// SDK client's own cap of 10 attempts per call, so a host hears the
// firewall's clear message rather than its own.
const defaultMaxRounds = 8

// Budget is one server's budget. Zero means no limit of that kind
// (the key is then absent from the policy's data).
type Budget struct {
	// HourlyTokens: a request whose prompt (its estimated tokens) and
	// maxTokens would take the server past this many tokens in the last
	// hour is denied (budget-exhausted).
	HourlyTokens int `mapstructure:"hourly_tokens"`
	// BurstPerMinute: a request arriving after this many in the last minute
	// is held for review (burst).
	BurstPerMinute int `mapstructure:"burst_per_minute"`
}

// DefaultFile is read, from the working folder, when no config file is
// named (--config, MCPXFW_CONFIG), if it exists.
const DefaultFile = "mcpx-fw.yaml"

// ServerNames are the configured servers' names, sorted; empty, never
// nil, when there are none.
func (c *Config) ServerNames() []string {
	names := slices.AppendSeq(make([]string, 0, len(c.Servers)), maps.Keys(c.Servers))
	slices.Sort(names)
	return names
}
