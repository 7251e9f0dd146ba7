package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay"
)

func serveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve a host over stdio, relaying to the configured upstream servers",
		Long: `serve speaks MCP to the host on stdin/stdout and starts every configured
upstream server as a subprocess. Everything passes through unchanged except
sampling requests, which are validated, decided by the policies in policy.dir
and, when a policy asks for review, held until an operator runs
'mcpx-fw review approve|reject' (from any shell, with the same config).
Logs go to stderr; stdout is the protocol.

Example host entry (Claude Desktop, VS Code):
  {"command": "mcpx-fw", "args": ["serve", "--config", "/path/to/mcpx-fw.yaml"]}`,
		Args: args(0, "mcpx-fw serve --config FILE"),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, configFlag(c))
		},
	}
}

func serve(ctx context.Context, configPath string) error {
	rt, err := startServing(ctx, configPath)
	if err != nil {
		return err
	}
	defer rt.close()
	proxy := relay.New(relayConfig(rt.cfg), rt.engine, rt.store, rt.log)
	if err := rt.engine.Watch(ctx); err != nil {
		rt.log.Warn("policy hot reload is off", zap.Error(err))
	}
	defer startPruning(ctx, rt)()
	rt.log.Info("serving", zap.Int("upstreams", len(rt.cfg.Servers)), zap.String("state_dir", rt.cfg.StateDir))
	return proxy.ServeStdio(ctx, os.Stdin, os.Stdout)
}

// startServing is serve's start-up path up to the point of serving: it is
// what `mcpx-fw check` runs.
func startServing(ctx context.Context, configPath string) (*runtime, error) {
	rt, err := start(ctx, configPath)
	if err != nil {
		return nil, err
	}
	if err := checkCommands(rt.cfg); err != nil {
		rt.close()
		return nil, err
	}
	if n, err := rt.store.AbandonOrphans(ctx); err != nil {
		rt.close()
		return nil, fmt.Errorf("state_dir %s: %w", rt.cfg.StateDir, err)
	} else if n > 0 {
		rt.log.Warn("reviews abandoned by an earlier process", zap.Int("count", n))
	}
	return rt, nil
}

// checkCommands fails early when an upstream's command cannot be found,
// instead of when the host connects.
func checkCommands(cfg *Config) error {
	for _, name := range sortedServerNames(cfg) {
		cmd := cfg.Servers[name].Command[0]
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("config %s: servers.%s.command: %q not found", displayPath(cfg.path), name, cmd)
		}
	}
	return nil
}

func sortedServerNames(cfg *Config) []string {
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func relayConfig(cfg *Config) relay.Config {
	rc := relay.Config{HostTimeout: cfg.Sampling.HostTimeout, Version: version}
	for _, name := range sortedServerNames(cfg) {
		s := cfg.Servers[name]
		label := s.Label
		if label == "" {
			label = name
		}
		rc.Upstreams = append(rc.Upstreams, relay.Upstream{Name: name, Label: label, Command: s.Command, Env: s.Env, Dir: s.Dir,
			OperatorAnswer: s.OperatorAnswer})
	}
	return rc
}
