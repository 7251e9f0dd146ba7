package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/relay"
)

// serverName is what a server may be called: policies key on it, and the
// relay prefixes tool names with it and "__".
var serverName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*(_[a-z0-9-]+)*$`)

// minStoreLease is the shortest store.lease: a replica renews its lease
// every third of it, and one that misses renewals for the whole lease
// (a database failover, a long pause) has its pending reviews abandoned
// by the others, however alive it is.
const minStoreLease = time.Second

// minProgressInterval is the shortest review.progress_interval.
const minProgressInterval = time.Second

// verify validates every field and names each bad key to bad.
func (c *Config) verify(bad func(key, format string, args ...any)) {
	verifyWord(bad, "policy.default", c.Policy.Default, "review", "deny", "permit")
	verifyWord(bad, "names.prefix", c.Names.Prefix, "auto", "always")
	if u, err := url.Parse(c.Store.URL); c.Store.URL != "" && (err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql")) {
		bad("store.url", "must be empty (the SQLite file in state_dir) or a postgres:// URL")
	}
	if c.Store.Lease < minStoreLease {
		bad("store.lease", "must be at least %v: a shorter lease is renewed several times a second and runs out at any pause of the database, when the other replicas abandon this one's reviews", minStoreLease)
	}
	if c.policyDirGiven && c.Policy.Dir == "" {
		bad("policy.dir", "is empty; leave it out to use the shipped policies built into mcpx-fw, or name a folder (mcpx-fw policy init writes one)")
	}
	positive(bad, "policy.timeout", c.Policy.Timeout)
	c.Policy.Bundle.verify(bad)
	c.Policy.Shadow.verify(bad)
	positive(bad, "review.timeout", c.Review.Timeout)
	if c.Review.ProgressInterval != 0 && c.Review.ProgressInterval < minProgressInterval {
		bad("review.progress_interval", "must be 0 (no progress) or at least %v: progress more often only loads the host", minProgressInterval)
	}
	if c.Review.Retain < 0 {
		bad("review.retain", "must be 0 (keep) or a positive duration such as 168h")
	}
	c.Review.Notify.verify(bad)
	if c.Replay.Keep < 0 {
		bad("replay.keep", "must be 0 (keep no inputs) or a positive duration such as 72h")
	}
	if c.Replay.MaxBytes <= 0 {
		bad("replay.max_bytes", "must be a positive number of bytes such as %d (256 MiB)", DefaultReplayMaxBytes)
	}
	positive(bad, "sampling.host_timeout", c.Sampling.HostTimeout)
	positive(bad, "restart.backoff", c.Restart.Backoff)
	positive(bad, "restart.max_backoff", c.Restart.MaxBackoff)
	if c.Restart.PingInterval < 0 {
		bad("restart.ping_interval", "must be 0 (never ping) or a positive duration such as 30s")
	}
	if c.Restart.MaxBackoff > 0 && c.Restart.MaxBackoff < c.Restart.Backoff {
		bad("restart.max_backoff", "must not be shorter than restart.backoff")
	}
	verifyWord(bad, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	if _, err := engine.UsageWindows(c.Usage.Windows); err != nil {
		bad("usage.windows", "%v", err)
	}
	c.Limits.verify(bad)
	verifyWord(bad, "isolation.default", c.Isolation.Default, isolationModes...)
	for key, paths := range map[string][]string{"isolation.hide": c.Isolation.Hide, "isolation.read_only": c.Isolation.ReadOnly} {
		if slices.Contains(paths, "") {
			bad(key, "an entry is empty (a bare ~ is YAML's null: quote it, \"~\")")
		}
	}
	c.HTTP.verify(bad, c.Limits.MaxBytes)
	c.DecisionLog.Service.verify(bad)
	c.Metrics.verify(bad)
	c.Tracing.verify(bad)
	for name, s := range c.Servers {
		c.verifyServer(bad, name, s)
	}
}

func (c *Config) verifyServer(bad func(string, string, ...any), name string, s Server) {
	key := "servers." + name
	if !serverName.MatchString(name) || strings.Contains(name, "__") {
		bad(key, "server names are lower-case letters, digits, '-' and single '_'")
	}
	if strings.HasSuffix(name, "_test") {
		bad(key, "a server name may not end in _test: its policy package's file, servers/%s.rego, would be read as a test file and never decide", name)
	}
	verifyReach(bad, key, s)
	if s.Protocol != "" {
		verifyWord(bad, key+".protocol", s.Protocol, append([]string{"auto", "legacy"}, relay.Revisions()...)...)
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
		verifyAllowedHost(bad, fmt.Sprintf("%s.elicitation.allowed_hosts[%d]", key, i), h)
	}
	c.verifyHostInputs(bad, key+".headers", s.Headers)
	c.verifyHostInputs(bad, key+".env", s.Env)
}

// verifyWord refuses a value that is not one of a key's words. The value
// is shown only when it is a slip of the keyboard from one of them (sampl
// for sample), which says nothing a reader of the words does not know:
// anything further off may be a secret pasted under the wrong key, and the
// line already says where it is written.
func verifyWord(bad func(string, string, ...any), key, value string, words ...string) {
	if oneOf(value, words...) {
		return
	}
	if near := nearest(strings.ToLower(value), words); near != "" {
		bad(key, "want one of %s, found %q (did you mean %s?)", strings.Join(words, ", "), value, near)
		return
	}
	bad(key, "want one of %s", strings.Join(words, ", "))
}

// verifyAllowedHost refuses an allowed_hosts entry that is not a bare host
// name. The policy compares an entry with the URL's host alone, so a
// scheme, port, path or wildcard never matches, and an empty one names no
// host: the operator meant something the firewall would silently not do.
// The entry is not shown: a URL pasted here may carry credentials.
func verifyAllowedHost(bad func(string, string, ...any), key, h string) {
	if what := notHostName(h); what != "" {
		bad(key, "not a host name (%s): write the host alone (auth.example.com), without scheme, port, path or wildcard", what)
	}
}

// notHostName says what makes h more or less than a host name, "" when
// it is one.
func notHostName(h string) string {
	_, _, portErr := net.SplitHostPort(h)
	switch {
	case h == "":
		return "it is empty"
	case strings.Contains(h, "://"):
		return "it has a scheme"
	case strings.Contains(h, "@"):
		return "it has credentials"
	case strings.ContainsAny(h, "/?#"):
		return "it has a path"
	case portErr == nil:
		return "it has a port"
	case strings.Contains(h, "*"):
		return "it has a wildcard"
	case strings.ContainsAny(h, " \t"):
		return "it has a space"
	}
	return ""
}

// verifyReach checks how the firewall reaches a server: by exactly one of a
// command (stdio) or a url (streamable HTTP), with only the keys that apply
// to it.
func verifyReach(bad func(string, string, ...any), key string, s Server) {
	switch {
	case s.URL != "" && len(s.Command) > 0:
		bad(key, "set command (a stdio server) or url (an HTTP server), not both")
	case s.URL != "":
		verifyURL(bad, key+".url", s.URL, "https://example.com/mcp")
		if len(s.Env) > 0 {
			bad(key+".env", "applies to command only; an HTTP server's environment is its own")
		}
		if s.Dir != "" {
			bad(key+".dir", "applies to command only")
		}
		if len(s.Args) > 0 {
			bad(key+".args", "applies to command only")
		}
		if s.Isolation != "" {
			bad(key+".isolation", "applies to command only; an HTTP server runs elsewhere")
		}
	case len(s.Command) == 0 || s.Command[0] == "":
		bad(key+".command", "required: the command that starts the server (or url for an HTTP server)")
	case commandLine(s.Command[0], s.Dir):
		bad(key+".command", "%s", commandLineHint(true))
	}
	if len(s.Headers) > 0 && s.URL == "" {
		bad(key+".headers", "applies to url only")
	}
	if s.Isolation != "" {
		verifyWord(bad, key+".isolation", s.Isolation, isolationModes...)
	}
	for name, value := range s.Env {
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"): // a pasted NAME=value: the key is not shown either
			bad(key+".env", "an environment name is empty or holds '=' or NUL: write NAME: value")
		case strings.Contains(value, "\x00"):
			bad(key+".env."+name, "the value holds NUL")
		}
	}
	for name := range s.Headers {
		verifyHeaderName(bad, key+".headers", name)
	}
}

// commandLine tells whether program is a whole command line written as one
// string, as a host's "command": "npx -y pkg" is copied: it holds a space
// and names no program, on PATH or as a path (from dir, when relative).
func commandLine(program, dir string) bool {
	if !strings.ContainsAny(program, " \t") {
		return false
	}
	if _, err := exec.LookPath(program); err == nil {
		return false
	}
	if strings.ContainsRune(program, filepath.Separator) && !filepath.IsAbs(program) && dir != "" {
		if _, err := os.Stat(filepath.Join(dir, program)); err == nil {
			return false
		}
	}
	return true
}

// commandLineHint is what a command key holding a whole command line in
// one string is told (servers.<name>.command, review.notify.command):
// the list form, and the args form where the key has args beside it. It
// shows an example rather than the user's own words, which often carry a
// token (--api-key …) and would be printed wherever the error goes.
func commandLineHint(withArgs bool) string {
	hint := "a whole command line in one string, not a program: write it as a list, one word an entry, such as command: [npx, -y, pkg]"
	if withArgs {
		hint += ", or as command: npx with args: [-y, pkg]"
	}
	return hint
}

// verify refuses limits that are not positive: a zero would not mean "no
// limit" but forbid everything. A byte budget below max_bytes would
// refuse requests that validation lets through.
func (l Limits) verify(bad func(string, string, ...any)) {
	for key, v := range map[string]int{"max_rounds": l.MaxRounds, "max_bytes": l.MaxBytes, "max_depth": l.MaxDepth,
		"max_messages": l.MaxMessages, "max_blocks": l.MaxBlocks, "max_text_bytes": l.MaxTextBytes,
		"max_base64_bytes": l.MaxBase64Bytes, "max_tools": l.MaxTools,
		"max_fields": l.MaxFields, "max_enum_values": l.MaxEnumValues, "max_label_bytes": l.MaxLabelBytes,
		"max_url_bytes": l.MaxURLBytes, "max_roots": l.MaxRoots,
		"max_in_flight": l.Held.InFlight, "max_pending_reviews": l.Held.PendingReviews, "max_held_bytes": l.Held.HeldBytes,
		"max_in_flight_per_host": l.Held.HostInFlight, "max_pending_reviews_per_host": l.Held.HostPendingReviews,
		"max_held_bytes_per_host": l.Held.HostHeldBytes} {
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
	for key, v := range map[string]int{"max_held_bytes": l.Held.HeldBytes, "max_held_bytes_per_host": l.Held.HostHeldBytes} {
		if v > 0 && l.MaxBytes > 0 && v < l.MaxBytes {
			bad("limits."+key, "%d is below limits.max_bytes (%d): a request of the largest size allowed could never be held", v, l.MaxBytes)
		}
	}
}

// verify refuses HTTP limits that are not positive, and a body cap below
// limits.max_bytes, which would refuse a host's answer that validation
// lets through.
func (h HTTP) verify(bad func(string, string, ...any), maxBytes int) {
	positive(bad, "http.session_timeout", h.SessionTimeout)
	positive(bad, "http.read_timeout", h.ReadTimeout)
	positive(bad, "http.idle_timeout", h.IdleTimeout)
	for key, v := range map[string]int64{"max_sessions": int64(h.MaxSessions), "max_header_bytes": int64(h.MaxHeaderBytes), "max_body_bytes": h.MaxBodyBytes} {
		if v <= 0 {
			bad("http."+key, "must be positive")
		}
	}
	if h.MaxBodyBytes > 0 && maxBytes > 0 && h.MaxBodyBytes <= int64(maxBytes) {
		bad("http.max_body_bytes", "%d is not above limits.max_bytes (%d): a host's answer of the largest size allowed would be refused", h.MaxBodyBytes, maxBytes)
	}
}

// verify refuses an address that is not HOST:PORT, and one other machines
// could reach unless allow_remote: /status names the store, the policy
// files and the upstreams, which is nobody else's business.
func (m Metrics) verify(bad func(string, string, ...any)) {
	if m.Addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(m.Addr)
	switch {
	case err != nil:
		bad("metrics.addr", "want HOST:PORT, such as 127.0.0.1:9464")
	case !m.AllowRemote && !relay.Loopback(host):
		bad("metrics.addr", "not a loopback address, so other machines could read the metrics and status; "+
			"use 127.0.0.1 or localhost, or set metrics.allow_remote: true")
	}
}

// verifyURL refuses raw unless it is an http:// or https:// URL with a
// host, saying what it is instead, never the URL, which may carry
// credentials; example is one the key takes. It tells whether raw is one.
func verifyURL(bad func(string, string, ...any), key, raw, example string) bool {
	u, err := url.Parse(raw)
	var found string
	switch {
	case err != nil:
		found = "a string that is not a URL"
	case u.Scheme == "":
		found = "one without a scheme"
	case u.Scheme != "http" && u.Scheme != "https":
		found = "another scheme"
	case u.Host == "":
		found = "one without a host"
	default:
		return true
	}
	bad(key, "want an http:// or https:// URL such as %s, found %s", example, found)
	return false
}

// headerName is an HTTP field name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// verifyHeaderName refuses names that are not HTTP field names, and those
// the transport sets itself: overriding them would break the session. key
// is the headers' key (servers.<name>.headers).
func verifyHeaderName(bad func(string, string, ...any), key, name string) {
	lower := strings.ToLower(name)
	switch {
	case !headerName.MatchString(name):
		bad(key, "%s", notHeaderName)
	case strings.HasPrefix(lower, "mcp-") || oneOf(lower, "accept", "content-type", "content-length", "host", "last-event-id", "connection", "transfer-encoding"):
		bad(key+"."+name, "%s is set by the MCP transport and cannot be configured", name)
	}
}

// notHeaderName is the problem of a header name that is not an HTTP field
// name. The name is not shown: it is most often a whole header line pasted
// as a name (Authorization: Bearer …), credential and all.
const notHeaderName = "a header name holds a character HTTP does not allow in one (a space, ':'): write Name: value"

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
