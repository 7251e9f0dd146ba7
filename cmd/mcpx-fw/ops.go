package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/hostcheck"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// newMetrics makes the metrics for cfg: its servers and usage windows are
// the only server and window label values.
func newMetrics(cfg *config.Config) *telemetry.Metrics {
	windows, _ := engine.UsageWindows(cfg.Usage.Windows) // checked by config.Load
	return telemetry.New(telemetry.Options{Servers: cfg.ServerNames(), Windows: slices.Sorted(maps.Keys(windows)), Shadow: cfg.Policy.Shadow.On()})
}

// wireMetrics points rt.metrics at what it reads at scrape time: the
// engine's policy status and decision-log counts, the store's queue and
// budgets.
func wireMetrics(ctx context.Context, rt *runtime) error {
	src, err := storeSources(ctx, rt.cfg, rt.store)
	if err != nil {
		return err
	}
	src.Policy = func() telemetry.Policy { return policyOf(rt.engine.PolicyStatus()) }
	src.DecisionLog = func() []telemetry.LogSink { return logSinksOf(rt.engine.DecisionLogStats()) }
	if keep := rt.cfg.Replay.Keep; keep > 0 {
		src.InputsDropped = rt.engine.InputsDropped
		src.Replay = func() telemetry.Replay {
			return telemetry.Replay{KeepSeconds: keep.Seconds(), MaxBytes: rt.cfg.Replay.MaxBytes,
				Dropped: rt.engine.InputsDropped(), Trimmed: rt.store.InputsTrimmed()}
		}
	}
	if _, ok := rt.engine.ShadowStatus(); ok {
		src.Shadow = func() telemetry.Shadow { st, _ := rt.engine.ShadowStatus(); return shadowOf(st) }
	}
	rt.metrics.SetSources(src)
	return nil
}

// storeSources are the Sources the store alone answers: what `mcpx-fw
// status` reads when no serve does.
func storeSources(ctx context.Context, cfg *config.Config, store *review.Store) (telemetry.Sources, error) {
	windows, err := engine.UsageWindows(cfg.Usage.Windows)
	if err != nil {
		return telemetry.Sources{}, err
	}
	usage, err := store.UsageReader(ctx, windows)
	if err != nil {
		return telemetry.Sources{}, fmt.Errorf("store: %w", err)
	}
	return telemetry.Sources{
		Pending: func(ctx context.Context) ([]telemetry.Pending, error) {
			ps, err := store.PendingSummary(ctx)
			out := make([]telemetry.Pending, len(ps))
			for i, p := range ps {
				out[i] = telemetry.Pending{Server: p.Server, Stage: p.Stage, Count: p.Count, Oldest: p.Oldest}
			}
			return out, err
		},
		Usage: func(ctx context.Context, server string) (map[string]telemetry.Usage, error) {
			us, err := usage.Read(ctx, server, time.Now())
			out := make(map[string]telemetry.Usage, len(us))
			for w, u := range us {
				out[w] = telemetry.Usage{Requests: u.Requests, RequestedTokens: u.RequestedTokens, ReturnedTokens: u.ReturnedTokens, Tokens: u.Tokens}
			}
			return out, err
		},
		Writable: store.Writable,
		Backend:  store.Backend(),
	}, nil
}

func policyOf(p engine.PolicyStatus) telemetry.Policy {
	return telemetry.Policy{Revision: p.Revision, Source: p.Source, Location: p.Location, LoadedAt: p.LoadedAt,
		Reloads: p.Reloads, LastError: p.LastError, LastErrorAt: p.LastErrorAt}
}

// shadowOf is the shadow policy's status as /status reports it:
// disagreements first by count, then by outcome words.
func shadowOf(st engine.ShadowStatus) telemetry.Shadow {
	out := telemetry.Shadow{Policy: policyOf(st.PolicyStatus), Disagreements: []telemetry.Disagreement{},
		Errors: st.Errors, Timeouts: st.Timeouts, Dropped: st.Dropped}
	for pair, n := range st.Compared {
		if pair[0] == pair[1] {
			out.Agreements += n
			continue
		}
		out.Disagreements = append(out.Disagreements, telemetry.Disagreement{Active: pair[0], Shadow: pair[1], Count: n})
	}
	slices.SortFunc(out.Disagreements, func(a, b telemetry.Disagreement) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Active, b.Active), cmp.Compare(a.Shadow, b.Shadow))
	})
	return out
}

func logSinksOf(stats []engine.DecisionLogStats) []telemetry.LogSink {
	out := make([]telemetry.LogSink, len(stats))
	for i, s := range stats {
		out[i] = telemetry.LogSink{Sink: s.Sink, Written: s.Written, Lost: s.Lost}
	}
	return out
}

// opsReadTimeout bounds how long a client of the ops listener may take to
// send a request: a scraper, a probe, `mcpx-fw status`.
const opsReadTimeout = 10 * time.Second

// serveOps starts the ops listener on metrics.addr, when set, and logs
// (and writes on stderr) the address it took, port 0 resolved. It
// answers only requests whose Host is its own address (a web page whose
// name was rebound to it is refused before anything is read), and with
// metrics.token_file set, gives a request without the token only what a
// probe needs (opsAccess). The returned func stops it (stopOps).
func serveOps(rt *runtime) (func(), error) {
	if rt.metrics == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", rt.cfg.Metrics.Addr)
	if err != nil {
		return nil, listenError("metrics.addr", rt.cfg.Metrics.Addr, err)
	}
	handler := hostcheck.For(ln.Addr().String(), rt.cfg.Metrics.Addr).Guard(rt.metrics.Handler(opsAccess(rt.opsToken)))
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: opsReadTimeout, ReadTimeout: opsReadTimeout}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rt.log.Error("ops listener stopped", zap.Error(err))
		}
	}()
	url := fmt.Sprintf("http://%s", ln.Addr())
	rt.log.Info("ops listener: /metrics, /healthz, /readyz, /status", zap.String("url", url), zap.Bool("token_required", rt.opsToken != nil))
	fmt.Fprintf(os.Stderr, "mcpx-fw: ops listening on %s\n", url)
	return func() { stopOps(srv) }, nil
}

// opsStopTimeout bounds how long stopping serve waits for the ops
// requests in flight; each reads the store for 2s at most.
const opsStopTimeout = 5 * time.Second

// stopOps lets the requests in flight finish, so none reads the store
// after serve has closed it, and cuts them off after opsStopTimeout.
func stopOps(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), opsStopTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}
