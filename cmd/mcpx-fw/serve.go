package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/relay"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

func serveCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve hosts over stdio (or streamable HTTP), relaying to the configured upstream servers",
		Long: `serve speaks MCP to the host on stdin/stdout, or with --http to any number of
hosts over streamable HTTP, and reaches every configured upstream server: a
command it starts (stdio) or a url (streamable HTTP). Everything passes
through unchanged except an upstream's sampling, elicitation and roots
requests, which are validated, decided by the policies in policy.dir (the
shipped ones built into mcpx-fw when it is not set; or the OPA bundle
policy.bundle.url serves) and, when a policy asks for review, held
until an operator runs 'mcpx-fw review approve|reject' (from any shell, with
the same config). Logs go to stderr; over stdio, stdout is the protocol.

The upstreams are treated as hostile. On Linux each stdio upstream runs
isolated, in user, mount, PID and IPC namespaces of its own where the state
dir, the config, the policies and the log files are hidden, serve cannot be
seen, /tmp, /var/tmp, /dev/shm and its terminals are its own, and your
shell's, editors', git's and login's start-up files and the folders on PATH
you can write are read-only (isolation.read_only adds more), and gets only a
short allow-list of serve's environment plus its own
env: (servers.<name>.isolation: none opts out; where the system cannot
isolate, serve refuses to start and says why). Its stderr is logged, a line
per entry naming the server. What one server may hold at once is bounded
(limits.max_in_flight, max_pending_reviews, max_held_bytes): past a limit its
next sampling, elicitation or roots request is refused at once with -32603
naming the key.

With --http ADDR the endpoint is http://ADDR/mcp (http://ADDR/ works too).
Hosts of every protocol revision share it: 2026-07-28 hosts statelessly,
older hosts in sessions, each session with upstreams of its own. ADDR must be
a loopback address (127.0.0.1, ::1, localhost) unless the config sets
http.allow_remote: true. A session's upstreams start on its first request,
idle sessions close after http.session_timeout, and http.max_sessions caps
them. Port 0 picks a free port; the line
"mcpx-fw: listening on http://HOST:PORT/mcp" on stderr says which.

To run it as infrastructure (README, Operations): metrics.addr opens an ops
listener with /metrics, /healthz, /readyz and /status ('mcpx-fw status'
reads it; "mcpx-fw: ops listening on http://HOST:PORT" on stderr), which
answers only its own Host and, with metrics.token_file, needs the token
for anything but liveness and readiness; decision_log.service ships the decision log to a collector, and
tracing.otlp.endpoint exports a span per decision. On SIGINT or SIGTERM
serve logs the signal, settles what it holds, then flushes the shipped log and the spans
(a few seconds at most) and exits.

Examples:
  mcpx-fw serve --config mcpx-fw.yaml
  mcpx-fw serve --config mcpx-fw.yaml --http 127.0.0.1:8080
  mcpx-fw serve --config mcpx-fw.yaml --http localhost:0

Host entry for stdio (Claude Desktop, VS Code):
  {"command": "mcpx-fw", "args": ["serve", "--config", "/path/to/mcpx-fw.yaml"]}
Host entry for HTTP (VS Code):
  {"type": "http", "url": "http://127.0.0.1:8080/mcp"}`,
		Args: args(0, "mcpx-fw serve --config FILE [--http 127.0.0.1:8080]"),
		RunE: func(c *cobra.Command, _ []string) error {
			addr, _ := c.Flags().GetString("http")
			if err := checkListenFlag(addr); err != nil {
				return err
			}
			path, err := requiredConfig(c)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(c.Context())
			defer stop()
			only, _ := c.Flags().GetString("server")
			return serve(ctx, path, addr, only)
		},
	}
	c.Flags().String("http", "", "serve hosts over streamable HTTP on `ADDR` (HOST:PORT) instead of stdio")
	c.Flags().String("server", "", "serve only the configured server `NAME`, its tool names unprefixed even with names.prefix: always (the entries 'mcpx-fw host connect' writes)")
	return c
}

// checkListenFlag refuses a malformed --http value as a usage error.
func checkListenFlag(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usageError{fmt.Errorf("--http %q is not HOST:PORT\nTry: mcpx-fw serve --http 127.0.0.1:8080", addr)}
	}
	return nil
}

// stopSignal is the cause of serve's context when a signal stops it.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return "stopped by " + signalName(s.sig) }

// signalName is a stop signal's name as kill and the logs write it.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalContext is ctx, ended by SIGINT or SIGTERM with the signal as its
// cause (stopSignal), so serve can say which one it stops for. As with
// signal.NotifyContext, both stay caught until stop: a second signal while
// serve settles what it holds does not kill it.
func signalContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			cancel(stopSignal{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

// logStopSignal logs, once, the signal that ends ctx, when one does:
// the operator's log says why serve stopped before it settles what it
// holds. The returned func stops it waiting.
func logStopSignal(ctx context.Context, log *zap.Logger) func() bool {
	return context.AfterFunc(ctx, func() {
		var s stopSignal
		if errors.As(context.Cause(ctx), &s) {
			log.Info("stopping on a signal", zap.String("signal", signalName(s.sig)))
		}
	})
}

// listenError names, in the error of a listener that could not open, the
// flag or config key that set its address (source), and says so plainly
// when another process holds the port. An error that already names it
// (an address refused before listening) is returned as it is.
func listenError(source, addr string, err error) error {
	var op *net.OpError
	switch {
	case !errors.As(err, &op):
		return err
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s %s: the port is already in use: stop what listens there, or choose another port (0 picks a free one)", source, addr)
	}
	return fmt.Errorf("%s %s: %w", source, addr, err)
}

// serve serves hosts over stdio, or over HTTP on addr when it is set. It
// makes itself non-dumpable first (see sandbox.Undumpable): its
// environment holds every server's credentials.
func serve(ctx context.Context, configPath, addr, only string) error {
	dumpable := sandbox.Undumpable()
	rt, err := startServing(ctx, configPath, only)
	if err != nil {
		return err
	}
	// Last: ServeStdio and ServeHTTP return only once the relay has
	// settled every request it held (each review abandoned, with its audit
	// entry) and closed its upstreams, so the store is never closed under
	// a settling review.
	defer rt.close()
	stopLogging := logStopSignal(ctx, rt.log)
	defer stopLogging()
	if dumpable != nil {
		rt.log.Warn("serve stays dumpable: processes of this account can read its memory and environment", zap.Error(dumpable))
	}
	rc, err := relayConfig(rt)
	if err != nil {
		return err
	}
	tracer, flush, err := startTracing(ctx, rt)
	if err != nil {
		return err
	}
	defer flush() // after the relay has settled every request it held
	rc.Tracer = tracer
	var ln net.Listener
	if addr != "" {
		if ln, err = relay.Listen(addr, rt.cfg.HTTP.AllowRemote); err != nil {
			return listenError("--http", addr, err)
		}
	}
	stop, err := startBeside(ctx, rt)
	if err != nil {
		return err
	}
	defer stop()
	return runRelay(ctx, rt, rc, ln)
}

// startBeside starts what serve runs beside the relay: the GC tuning, the
// ops listener, policy hot reload (or bundle polling) and pruning. stop
// ends them and waits for them, so nothing of theirs runs once serve
// closes the log and the store.
func startBeside(ctx context.Context, rt *runtime) (stop func(), err error) {
	startGC(ctx, rt.log)
	stopOps, err := serveOps(rt)
	if err != nil {
		return nil, err
	}
	stopWatch, err := rt.engine.Watch(ctx)
	if err != nil {
		rt.log.Warn("policy hot reload is off", zap.Error(err))
	}
	stopPruning := startPruning(ctx, rt)
	return func() { stopPruning(); stopWatch(); stopOps() }, nil
}

// runRelay serves hosts over stdio, or over HTTP on ln when it is set,
// until ctx ends or the stdio host goes away.
func runRelay(ctx context.Context, rt *runtime, rc relay.Config, ln net.Listener) error {
	proxy := relay.New(rc, rt.engine, rt.store, rt.log)
	if ln == nil {
		rt.log.Info("serving", zap.Int("upstreams", len(rt.cfg.Servers)), zap.String("state_dir", rt.cfg.StateDir))
		return proxy.ServeStdio(ctx, os.Stdin, os.Stdout)
	}
	url := fmt.Sprintf("http://%s/mcp", ln.Addr())
	rt.log.Info("serving", zap.Int("upstreams", len(rt.cfg.Servers)), zap.String("state_dir", rt.cfg.StateDir), zap.String("url", url),
		zap.String("seal_key_id", seal.KeyID(rc.SealKey)))
	fmt.Fprintf(os.Stderr, "mcpx-fw: listening on %s\n", url)
	return proxy.ServeHTTP(ctx, ln)
}

// startServing is serve's start-up path up to the point of serving: it is
// what `mcpx-fw check` runs.
func startServing(ctx context.Context, configPath, only string) (*runtime, error) {
	rt, err := start(ctx, configPath)
	if err != nil {
		return nil, err
	}
	if err := rt.serveOnly(only); err != nil {
		rt.close()
		return nil, err
	}
	if err := rt.readyToServe(ctx); err != nil {
		rt.close()
		return nil, err
	}
	return rt, nil
}

// serveOnly keeps, when --server names one, that server alone: a host
// entry per server lists the server's tools under their own names, as the
// host did when it started the server itself, whatever names.prefix says
// (the entry serves that one server only, so its names never change).
func (rt *runtime) serveOnly(name string) error {
	if name == "" {
		return nil
	}
	s, ok := rt.cfg.Servers[strings.ToLower(name)]
	if !ok {
		return usageError{fmt.Errorf("--server %s: config %s has no such server (it has %s)",
			name, rt.cfg.DisplayPath(), strings.Join(slices.Sorted(maps.Keys(rt.cfg.Servers)), ", "))}
	}
	rt.cfg.Servers = map[string]config.Server{strings.ToLower(name): s}
	rt.cfg.Names.Prefix = "auto"
	return nil
}

// readyToServe is what serve's start-up path does once the runtime is
// open: it checks the servers, abandons the reviews of a process that
// died, and plans how each upstream is isolated.
func (rt *runtime) readyToServe(ctx context.Context) error {
	if err := checkServers(rt.cfg); err != nil {
		return err
	}
	if n, err := rt.store.AbandonOrphans(ctx); err != nil {
		return fmt.Errorf("state_dir %s: %w", rt.cfg.StateDir, err)
	} else if n > 0 {
		rt.log.Warn("reviews abandoned by an earlier process", zap.Int("count", n))
	}
	plan, err := planIsolation(rt.cfg)
	if err != nil {
		return fmt.Errorf("config %s: %w", rt.cfg.DisplayPath(), err)
	}
	plan.log(rt.log, rt.cfg)
	rt.isolation = plan
	return nil
}

// checkServers fails early, instead of when a host connects, when an
// upstream's command cannot be found or a header or env value refers to an
// environment variable that is not set (every such value at once, each at
// its line of the file; tracing.otlp.headers' too, read
// only once serve runs; policy.bundle's and decision_log.service's are
// read as the runtime opens), and when what review.notify runs is not
// there. Only serve and check need any of it,
// so the review commands work from a shell without the upstreams'
// credentials.
func checkServers(cfg *config.Config) error {
	if _, err := cfg.Tracing.Headers(); err != nil {
		return cfg.Placed(err)
	}
	if err := lookNotifyPaths(cfg); err != nil {
		return err
	}
	var unset []error
	for _, name := range cfg.ServerNames() {
		_, herr := config.ExpandHeaders(name, cfg.Servers[name].Headers)
		_, eerr := config.ExpandEnv(name, cfg.Servers[name].Env)
		unset = append(unset, herr, eerr)
	}
	if err := errors.Join(unset...); err != nil {
		return cfg.Placed(err)
	}
	for _, name := range cfg.ServerNames() {
		s := cfg.Servers[name]
		if s.URL != "" {
			continue
		}
		if _, err := exec.LookPath(s.Command[0]); err != nil {
			key := "servers." + name + ".command"
			return fmt.Errorf("%s: %s: %s", cfg.Place(key), key, programNotFound)
		}
	}
	return nil
}

// relayConfig is the relay's view of the config, with ${VAR} in header and
// env values replaced from the environment (checked by checkServers), how
// each upstream is isolated (rt.isolation), and the key that seals the
// requestState given to 2026-07-28 hosts (sealKey).
func relayConfig(rt *runtime) (relay.Config, error) {
	cfg := rt.cfg
	key, err := sealKey(cfg)
	if err != nil {
		return relay.Config{}, err
	}
	rc := relay.Config{HostTimeout: cfg.Sampling.HostTimeout, MaxRounds: cfg.Limits.MaxRounds, SealKey: key, Version: version,
		Hide: rt.isolation.hide, ReadOnly: rt.isolation.readOnly, Limits: cfg.Limits.Held, HTTP: cfg.HTTP.HTTPOptions, Restart: cfg.Restart}
	rc.MaxBridged, rc.MaxBridgedPerServer = cfg.Limits.MaxBridgedCalls, cfg.Limits.MaxBridgedCallsPerServer
	rc.BridgeWait = cfg.Limits.BridgeWait
	rc.ReviewProgress = cfg.Review.ProgressInterval
	rc.Metrics = rt.metrics
	rc.PrefixNames = cfg.Names.Prefix == "always"
	rc.Upstreams, err = upstreamsOf(rt)
	return rc, err
}

// upstreamsOf is the relay's view of each configured server (see
// relayConfig); `mcpx-fw check` starts each from it as serve would.
func upstreamsOf(rt *runtime) ([]relay.Upstream, error) {
	cfg := rt.cfg
	var out []relay.Upstream
	for _, name := range cfg.ServerNames() {
		s := cfg.Servers[name]
		label := s.Label
		if label == "" {
			label = name
		}
		headers, herr := config.ExpandHeaders(name, s.Headers)
		env, eerr := config.ExpandEnv(name, s.Env)
		if err := errors.Join(herr, eerr); err != nil {
			return nil, cfg.Placed(err)
		}
		out = append(out, relay.Upstream{Name: name, Label: label, Command: s.Command, Env: env, Dir: s.Dir,
			Isolated: rt.isolation.isolated[name], URL: s.URL, Headers: headers, Era: s.Protocol, OperatorAnswer: s.OperatorAnswer,
			Sampling: s.Sampling, Elicitation: s.Elicitation, Roots: s.Roots})
	}
	return out, nil
}

// sealKey is the key that seals the requestState given to 2026-07-28
// hosts: seal.key_file, which every replica behind one address shares, or
// else seal.key in the state dir (0600, made on first use).
func sealKey(cfg *config.Config) ([]byte, error) {
	if cfg.Seal.KeyFile != "" {
		key, err := seal.LoadKeyFile(cfg.Seal.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("config %s: seal.key_file: %w", cfg.DisplayPath(), err)
		}
		return key, nil
	}
	key, err := seal.LoadKey(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("state_dir %s: %w", cfg.StateDir, err)
	}
	return key, nil
}
