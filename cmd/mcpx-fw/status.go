package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

func statusCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "Show what the running serve knows: policy, upstreams, review queue, budgets, decision log, store",
		Long: `status asks the running 'mcpx-fw serve' for its /status, on the ops listener
at metrics.addr (or --addr), and prints it for a person:

  - ready or not, and each failing readiness check (the store not writable,
    an upstream down and why, no policy)
  - the policy revision deciding, where it came from, its load attempts by
    result and the last reload error (the previous revision keeps deciding)
  - each configured upstream: up or down with the reason, live sessions
  - reviews pending by server and stage, with the oldest one's age
  - budget use per server and usage window
  - decision-log lines written and lost per sink
  - the store's backend and whether it takes writes

--json prints the same document as JSON (what GET /status returns).

When no serve answers (metrics.addr is not set, or nothing listens there),
status prints what the store alone knows (pending reviews and budgets, the
same for every replica sharing it), then one line saying what to do, and
exits 1. It also exits 1 when serve answers but is not ready.

Examples:
  mcpx-fw status --config mcpx-fw.yaml
  mcpx-fw status --config mcpx-fw.yaml --json
  mcpx-fw status --addr 127.0.0.1:9464`,
		Args: args(0, "mcpx-fw status [--json] [--addr HOST:PORT]"),
		RunE: func(c *cobra.Command, _ []string) error {
			asJSON, _ := c.Flags().GetBool("json")
			addr, _ := c.Flags().GetString("addr")
			return runStatus(c, asJSON, addr)
		},
	}
	c.Flags().Bool("json", false, "print the status as JSON")
	c.Flags().String("addr", "", "ask the serve whose ops listener is at `HOST:PORT` (default metrics.addr)")
	return c
}

// statusTimeout bounds asking serve: its /status bounds its own store
// reads (telemetry.DefaultStoreTimeout, twice), so this is never the
// deadline that fires first against a live serve.
const statusTimeout = 10 * time.Second

func runStatus(c *cobra.Command, asJSON bool, addr string) error {
	cfg, err := loadConfig(configFlag(c))
	if err != nil {
		return err
	}
	if addr == "" {
		addr = cfg.Metrics.Addr
	}
	ctx, cancel := context.WithTimeout(c.Context(), statusTimeout)
	defer cancel()
	why := errors.New("metrics.addr is not set, so there is no serve to ask: set metrics.addr (such as 127.0.0.1:9464) in the config and restart serve, or pass --addr HOST:PORT")
	if addr != "" {
		st, err := fetchStatus(ctx, addr)
		if err == nil {
			return printStatus(c.OutOrStdout(), st, asJSON, true)
		}
		why = fmt.Errorf("no serve answers at http://%s/status (%v): start 'mcpx-fw serve' with metrics.addr set in this config, or pass --addr HOST:PORT", addr, err)
	}
	st, err := storeStatus(ctx, cfg)
	if err != nil {
		return withCode(exitFailure, errors.Join(why, err))
	}
	if err := printStatus(c.OutOrStdout(), st, asJSON, false); err != nil && !errors.Is(err, errNotReady) {
		return err
	}
	return withCode(exitFailure, why)
}

// fetchStatus asks the serve at addr for its /status.
func fetchStatus(ctx context.Context, addr string) (telemetry.Status, error) {
	var st telemetry.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, errors.Unwrap(err) // the url.Error's cause: the address is said once
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&st); err != nil {
		return st, fmt.Errorf("not a status document: %w", err)
	}
	return st, nil
}

// storeStatus is what the store alone knows, read as serve reads it.
func storeStatus(ctx context.Context, cfg *Config) (telemetry.Status, error) {
	if cfg.Log.Level != "debug" {
		cfg.Log.Level = "warn"
	}
	log, closeLog, err := newLogger(cfg)
	if err != nil {
		return telemetry.Status{}, err
	}
	defer closeLog()
	store, err := openReviewStore(ctx, cfg, log)
	if err != nil {
		return telemetry.Status{}, err
	}
	defer store.Close()
	src, err := storeSources(ctx, cfg, store)
	if err != nil {
		return telemetry.Status{}, err
	}
	m := newMetrics(cfg)
	m.SetSources(src)
	return m.StoreStatus(ctx), nil
}
