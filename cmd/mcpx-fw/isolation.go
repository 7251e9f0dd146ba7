package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// isolationPlan is how each upstream runs, decided once at start-up.
type isolationPlan struct {
	hide     []string            // paths no isolated upstream can reach
	readOnly []string            // paths isolated upstreams can read but not change
	exposed  []sandbox.Unguarded // entry points they can still write, and why
	isolated map[string]bool     // command servers that run isolated
	why      map[string]string   // for every other server, why not
}

// planIsolation decides, per server, whether it runs isolated, and checks
// once that this system can isolate when any server must. A server that
// must but cannot is refused, and with it serve: the isolation is what
// keeps an upstream from approving its own escalation, and a config that
// asks for it must not get less without anyone choosing so. The choice is
// one word: isolation: none, for a server or for all (isolation.default).
func planIsolation(cfg *config.Config) (isolationPlan, error) {
	plan := isolationPlan{isolated: map[string]bool{}, why: map[string]string{}}
	var want []string
	for _, name := range cfg.ServerNames() {
		s := cfg.Servers[name]
		mode, key := cfg.IsolationOf(name, s)
		switch {
		case s.URL != "":
			plan.why[name] = "an HTTP upstream runs elsewhere"
		case mode == config.IsolationNone:
			plan.why[name] = key + " is none"
		default:
			want = append(want, name)
		}
	}
	if len(want) == 0 {
		return plan, nil
	}
	plan.hide = protectedPaths(cfg)
	plan.readOnly, plan.exposed = readOnlyPaths(cfg, plan.hide)
	if err := sandbox.Probe(plan.hide, plan.readOnly); err != nil {
		servers := "server " + want[0]
		if len(want) > 1 {
			servers = "servers " + strings.Join(want, ", ")
		}
		return plan, fmt.Errorf("%s: isolation is namespaces, but this system cannot isolate: %w; "+
			"enable unprivileged user namespaces (see the README, Threat model) or set isolation: none (isolation.default: none for every server)",
			servers, err)
	}
	for _, name := range want {
		plan.isolated[name] = true
	}
	return plan, nil
}

// log says, per upstream, whether it runs isolated and, if not, why: a
// command server that is not isolated is a warning.
func (p isolationPlan) log(log *zap.Logger, cfg *config.Config) {
	if len(p.hide) > 0 {
		log.Info("isolated upstreams cannot reach these paths", zap.Strings("paths", p.hide))
	}
	if len(p.readOnly) > 0 {
		log.Info("isolated upstreams can read but not change these paths", zap.Strings("paths", p.readOnly))
	}
	for _, g := range p.exposedByWhy() {
		log.Info("isolated upstreams can still write these paths", zap.String("why", g.why), zap.Strings("paths", g.paths))
	}
	for _, name := range cfg.ServerNames() {
		switch {
		case p.isolated[name]:
			log.Info("upstream isolation", zap.String("server", name), zap.Bool("isolated", true), zap.String("how", isolatedHow))
		case cfg.Servers[name].URL != "":
			log.Info("upstream isolation", zap.String("server", name), zap.Bool("isolated", false), zap.String("why", p.why[name]))
		default:
			log.Warn("upstream isolation", zap.String("server", name), zap.Bool("isolated", false), zap.String("why", p.why[name]))
		}
	}
}

// isolatedHow is what an isolated upstream runs in.
const isolatedHow = "user, mount, PID and IPC namespaces, its own /tmp"

// describe is one line per server for `mcpx-fw check`, after a line of
// what isolated upstreams cannot change and one per reason they can still
// write an entry point.
func (p isolationPlan) describe(cfg *config.Config) []string {
	var out []string
	if len(p.readOnly) > 0 {
		out = append(out, "read-only for isolated upstreams: "+strings.Join(homeRelative(p.readOnly), ", "))
	}
	for _, g := range p.exposedByWhy() {
		out = append(out, fmt.Sprintf("isolated upstreams can still write (%s): %s", g.why, strings.Join(homeRelative(g.paths), ", ")))
	}
	for _, name := range cfg.ServerNames() {
		if p.isolated[name] {
			out = append(out, fmt.Sprintf("server %s: isolated (%s)", name, isolatedHow))
		} else {
			out = append(out, fmt.Sprintf("server %s: not isolated: %s", name, p.why[name]))
		}
	}
	return out
}

// protectedPaths are what an isolated upstream must not reach: every path
// through which it could decide a review, change how one is decided, or
// read serve's secrets. They are the state dir (the review queue, seal.key,
// the decision log's salt), seal.key_file and metrics.token_file when set,
// the policy dir (when set), the config file, the service log and the decision log
// when they are files, the paths of isolation.hide, and the user's session services
// (sandbox.SessionPaths), which run commands outside any sandbox. Each is
// made absolute and, where it is reached through symbolic links, given
// resolved too: the log names what is covered, and the launcher, which
// resolves each itself, keeps the links on the way from being pointed
// elsewhere (a config given by a link to a forged one).
func protectedPaths(cfg *config.Config) []string {
	paths := []string{cfg.StateDir}
	if cfg.Policy.Dir != "" { // none: the policies are inside the binary
		paths = append(paths, cfg.Policy.Dir)
	}
	for _, secret := range []string{cfg.Seal.KeyFile, cfg.Metrics.TokenFile} {
		if secret != "" {
			paths = append(paths, secret)
		}
	}
	if cfg.Path() != "" {
		paths = append(paths, cfg.Path())
	}
	for _, sink := range []string{cfg.Log.File, cfg.DecisionLog.Sink} {
		if sink != "" && sink != "stderr" && sink != "off" {
			paths = append(paths, sink)
		}
	}
	paths = append(paths, cfg.Isolation.Hide...)
	paths = append(paths, sandbox.SessionPaths()...)
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			out = append(out, real)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// readOnlyPaths are what isolated upstreams get read-only: the user's entry
// points and writable PATH folders (sandbox.OperatorPaths), the paths of
// isolation.read_only, and mcpx-fw's own binary when the user can write
// it (the review CLI is this binary); and what of those cannot be kept,
// and why. A path hidden already (or inside one) is left out: it cannot
// be reached at all.
func readOnlyPaths(cfg *config.Config, hide []string) ([]string, []sandbox.Unguarded) {
	extra := slices.Clone(cfg.Isolation.ReadOnly)
	if exe, err := os.Executable(); err == nil && sandbox.Writable(exe) {
		extra = append(extra, exe)
	}
	ro, exposed := sandbox.OperatorPaths(extra)
	hidden := func(p string) bool {
		return slices.ContainsFunc(hide, func(h string) bool { return p == h || strings.HasPrefix(p, h+"/") })
	}
	return slices.DeleteFunc(ro, hidden), slices.DeleteFunc(exposed, func(u sandbox.Unguarded) bool { return hidden(u.Path) })
}

// whyGroup is the paths one reason applies to.
type whyGroup struct {
	why   string
	paths []string
}

// exposedByWhy groups the exposed entry points by reason, in the order
// the reasons first appear.
func (p isolationPlan) exposedByWhy() []whyGroup {
	var out []whyGroup
	for _, u := range p.exposed {
		i := slices.IndexFunc(out, func(g whyGroup) bool { return g.why == u.Why })
		if i < 0 {
			out = append(out, whyGroup{why: u.Why})
			i = len(out) - 1
		}
		out[i].paths = append(out[i].paths, u.Path)
	}
	return out
}

// homeRelative writes paths in the home as ~/..., as a user reads them.
func homeRelative(paths []string) []string {
	home, err := os.UserHomeDir()
	out := make([]string, len(paths))
	for i, p := range paths {
		if rest, ok := strings.CutPrefix(p, home+"/"); ok && err == nil && home != "/" {
			p = "~/" + rest
		}
		out[i] = p
	}
	return out
}
