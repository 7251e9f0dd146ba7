package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/policies"
)

// runtime is everything serve's start-up path builds; check builds the same
// and stops, and the review commands use it to re-decide on approve.
type runtime struct {
	cfg      *config.Config
	log      *zap.Logger
	store    *review.Store
	engine   *engine.Engine
	operator bool // an operator's CLI: quiet logs, no decision log
	closers  []func()
	// isolation is how each upstream runs (serve and check only).
	isolation isolationPlan
	// metrics is what the ops listener serves (metrics.addr); nil when it
	// is off and for the operator's commands.
	metrics *telemetry.Metrics
	// opsToken is metrics.token_file's token (serve and check only); nil
	// when none is required.
	opsToken []byte
	// usage reads servers' usage for the operator's commands (cost.go).
	usage usageSource
}

// start runs serve's start-up path: config, logger, state dir and store,
// policy compilation. Anything wrong stops it with one clear error.
func start(ctx context.Context, configPath string) (*runtime, error) {
	return startRuntime(ctx, configPath, false)
}

// startOperator is start for the review commands: warnings only on stderr,
// and no decision log (serve records the authoritative decisions).
func startOperator(ctx context.Context, configPath string) (*runtime, error) {
	return startRuntime(ctx, configPath, true)
}

// startReader is the runtime of the commands that only read the queue
// (review list, show and watch; audit): the config and the store, and no
// policy. A policy is needed only to decide, so these work from any
// folder with MCPXFW_STATE_DIR (or store.url) alone, whatever the
// policies are; what the config alone knows (budgets, operator answers)
// is unknown without one (noConfigNote).
func startReader(ctx context.Context, configPath string) (*runtime, error) {
	return startWith(ctx, configPath, true, existing((*runtime).openStore))
}

// startDecider is startOperator for the commands that decide or change
// what the queue holds (approve, reject, answer, prune, the console):
// they act on the store serve made and never create one.
func startDecider(ctx context.Context, configPath string) (*runtime, error) {
	return startWith(ctx, configPath, true, existing((*runtime).open))
}

// existing is open run only when the review store exists (storeExists).
func existing(open func(*runtime, context.Context) error) func(*runtime, context.Context) error {
	return func(rt *runtime, ctx context.Context) error {
		if err := rt.storeExists(); err != nil {
			return err
		}
		return open(rt, ctx)
	}
}

// storeExists refuses a SQLite store that is not there: opening it would
// create the state dir and an empty queue, and a misspelt state dir would
// read as "no reviews waiting". Only serve (and store migrate) create one.
func (rt *runtime) storeExists() error {
	if !storeMissing(rt.cfg) {
		return nil
	}
	return errNoStore(rt.cfg)
}

// errNoStore says that cfg's state dir holds no review store, and what
// named the state dir, so a misspelt one is seen at once.
func errNoStore(cfg *config.Config) error {
	return fmt.Errorf("no review store in %s (%s): has serve run with this state dir?", cfg.StateDir, cfg.StateDirOrigin())
}

func startRuntime(ctx context.Context, configPath string, operator bool) (*runtime, error) {
	return startWith(ctx, configPath, operator, (*runtime).open)
}

// startWith loads the config, quieted for an operator's command, and
// opens the runtime with open.
func startWith(ctx context.Context, configPath string, operator bool, open func(*runtime, context.Context) error) (*runtime, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	if operator {
		if cfg.Log.Level != "debug" {
			cfg.Log.Level = "warn"
		}
		cfg.DecisionLog.Sink = "off"
	}
	rt := &runtime{cfg: cfg, operator: operator}
	if err := open(rt, ctx); err != nil {
		rt.close()
		return nil, err
	}
	return rt, nil
}

// openStore builds the logger and opens the review store.
func (rt *runtime) openStore(ctx context.Context) error {
	log, closeLog, err := newLogger(rt.cfg)
	if err != nil {
		return err
	}
	rt.log = log
	rt.closers = append(rt.closers, closeLog, func() { _ = log.Sync() })
	if rt.store, err = openReviewStore(ctx, rt.cfg, log); err != nil {
		return err
	}
	rt.closers = append(rt.closers, func() { _ = rt.store.Close() })
	rt.store.KeepInputs = rt.cfg.Replay.Keep // what Prune keeps
	rt.store.KeepInputsBytes = rt.cfg.Replay.MaxBytes
	return nil
}

func (rt *runtime) open(ctx context.Context) error {
	if err := rt.openStore(ctx); err != nil {
		return err
	}
	log := rt.log
	dlog, closeDlog, err := openSink(rt.cfg.DecisionLog.Sink)
	if err != nil {
		return fmt.Errorf("decision_log.sink: %w", err)
	}
	rt.closers = append(rt.closers, closeDlog)
	ecfg, err := rt.engineConfig(dlog)
	if err != nil {
		return err
	}
	if !rt.operator && rt.cfg.Metrics.Addr != "" {
		rt.metrics = newMetrics(rt.cfg)
		ecfg.Metrics = rt.metrics
	}
	if !rt.operator && rt.cfg.Metrics.TokenFile != "" {
		if rt.opsToken, err = loadOpsToken(rt.cfg.Metrics.TokenFile); err != nil {
			return fmt.Errorf("config %s: %w", rt.cfg.DisplayPath(), err)
		}
	}
	if !rt.operator {
		if err := rt.startDecisionLogService(ctx, &ecfg); err != nil {
			return err
		}
		rt.startNotifier(ctx)
	}
	rt.engine, err = engine.New(ctx, ecfg, rt.store, log)
	if err != nil {
		return rt.policyError(err)
	}
	rt.closers = append(rt.closers, rt.engine.Close) // before the decision log's sinks close
	rt.store.PolicyRevision = rt.engine.Revision     // named in every audit entry
	if rt.metrics != nil {
		return wireMetrics(ctx, rt)
	}
	return nil
}

// startNotifier makes serve announce every review its store opens, when
// review.notify asks for it. Only serve (and check) opens reviews to
// announce: an operator's command never does.
func (rt *runtime) startNotifier(ctx context.Context) {
	if !rt.cfg.Review.Notify.On() {
		return
	}
	n, stop := startNotifier(ctx, rt.cfg.Review.Notify, rt.log)
	rt.store.Opened = n.opened
	rt.closers = append(rt.closers, stop)
}

// policyError names the policy source a start-up failure is about.
func (rt *runtime) policyError(err error) error {
	switch {
	case rt.cfg.Policy.Bundle.URL != "":
		return fmt.Errorf("policy.bundle: %w", err)
	case rt.cfg.Policy.Dir == "":
		return fmt.Errorf("%s: %w", engine.ShippedPolicyName, err)
	}
	return fmt.Errorf("policy.dir %s: %w", rt.cfg.Policy.Dir, err)
}

func (rt *runtime) engineConfig(dlog io.Writer) (engine.Config, error) {
	bundle, err := rt.cfg.Policy.Bundle.EngineBundle(rt.cfg.StateDir, !rt.operator)
	if err != nil {
		return engine.Config{}, rt.cfg.Placed(err)
	}
	cfg := engine.Config{
		Policy: engine.PolicyConfig{
			Dir:     rt.cfg.Policy.Dir,
			FS:      shippedUnlessDir(rt.cfg),
			Timeout: rt.cfg.Policy.Timeout,
			Data:    policyData(rt.cfg),
			Bundle:  bundle,
		},
		ReviewTimeout:  rt.cfg.Review.Timeout,
		Limits:         rt.cfg.Limits.Limits,
		DecisionLog:    dlog,
		IncludeContent: rt.cfg.DecisionLog.IncludeContent,
		UsageWindows:   rt.cfg.Usage.Windows,
		KeepInputs:     rt.cfg.Replay.Keep > 0,
	}
	if cfg.Shadow, err = rt.shadowConfig(cfg.Policy); err != nil {
		return engine.Config{}, err
	}
	shipping := rt.cfg.DecisionLog.Service.URL != "" && !rt.operator
	if dlog == nil && !shipping || rt.cfg.DecisionLog.IncludeContent {
		return cfg, nil
	}
	// The salt lives beside the queue, so digests of equal texts match
	// across serve processes and restarts.
	salt, err := engine.LoadLogSalt(rt.cfg.StateDir)
	if err != nil {
		return cfg, fmt.Errorf("state_dir %s: %w", rt.cfg.StateDir, err)
	}
	cfg.LogSalt = salt
	return cfg, nil
}

// shadowConfig is policy.shadow for the engine, nil when none is
// configured or the command only reads or acts on the queue (an
// operator's command writes no decision log and serves no metrics, so a
// shadow's result would go nowhere). It shares active's data: a
// candidate judges the same servers' config.
func (rt *runtime) shadowConfig(active engine.PolicyConfig) (*engine.PolicyConfig, error) {
	sh := rt.cfg.Policy.Shadow
	if !sh.On() || rt.operator {
		return nil, nil
	}
	bundle, err := sh.EngineBundle(rt.cfg.StateDir, true)
	if err != nil {
		return nil, rt.cfg.Placed(err)
	}
	return &engine.PolicyConfig{Dir: sh.Dir, Timeout: sh.Timeout, Data: active.Data, Bundle: bundle}, nil
}

// startDecisionLogService starts the service sink, if configured, into
// cfg; it is stopped (flushing what it holds, within a bound) after
// everything that decides has closed.
func (rt *runtime) startDecisionLogService(ctx context.Context, cfg *engine.Config) error {
	ship, err := startDecisionLogService(ctx, rt.cfg.DecisionLog.Service, rt.log)
	var unset *config.KeyError
	if errors.As(err, &unset) {
		return rt.cfg.Placed(err)
	}
	if err != nil || ship == nil {
		return err
	}
	cfg.DecisionLogService = ship
	rt.closers = append(rt.closers, func() { ship.Stop(dlogServiceStopTimeout) })
	return nil
}

// shippedUnlessDir is the embedded shipped policies when the config names
// no policy.dir, so a binary decides with nothing beside it.
func shippedUnlessDir(cfg *config.Config) fs.FS {
	if cfg.Policy.Dir != "" {
		return nil
	}
	return policies.FS
}

// policyData is the server configuration policies see as
// data.mcpxfw.config.
func policyData(cfg *config.Config) map[string]any {
	servers := map[string]any{}
	for name, s := range cfg.Servers {
		server := map[string]any{"label": s.Label}
		if s.MaxTokens > 0 { // 0 means no cap: the key is left out
			server["max_tokens"] = s.MaxTokens
		}
		if budget := budgetData(s.Budget); len(budget) > 0 {
			server["budget"] = budget
		}
		// Always arrays, never null: a rule iterating them needs no guard.
		server["elicitation"] = map[string]any{"allowed_hosts": listOrEmpty(s.Elicitation.AllowedHosts)}
		server["roots"] = map[string]any{"allow": listOrEmpty(s.Roots.Allow)}
		servers[name] = server
	}
	return map[string]any{"default": cfg.Policy.Default, "servers": servers}
}

// listOrEmpty is list, or an empty list for none.
func listOrEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// budgetData is a server's budget as policies see it: only the limits set,
// so a rule about an unset limit does not fire.
func budgetData(b config.Budget) map[string]any {
	out := map[string]any{}
	if b.HourlyTokens > 0 {
		out["hourly_tokens"] = b.HourlyTokens
	}
	if b.BurstPerMinute > 0 {
		out["burst_per_minute"] = b.BurstPerMinute
	}
	return out
}

func (rt *runtime) close() {
	for i := len(rt.closers) - 1; i >= 0; i-- {
		rt.closers[i]()
	}
}

// openReviewStore opens the review store config names: the PostgreSQL database
// of store.url, or else the SQLite file in state_dir. The URL is never
// printed: OpenURL's errors name it without its password.
func openReviewStore(ctx context.Context, cfg *config.Config, log *zap.Logger) (*review.Store, error) {
	if cfg.Store.URL != "" {
		st, err := review.OpenURL(ctx, cfg.Store.URL, log, review.WithLease(cfg.Store.Lease))
		if err != nil {
			return nil, fmt.Errorf("store.url: %w", err)
		}
		return st, nil
	}
	st, err := review.Open(cfg.StateDir, log)
	if err != nil {
		return nil, fmt.Errorf("state_dir %s: %w", cfg.StateDir, err)
	}
	return st, nil
}
