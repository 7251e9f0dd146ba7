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

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
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

With metrics.token_file set in the config, status sends its token
(Authorization: Bearer), as serve requires it for the full status; a token
file that is missing, unreadable, empty or readable by group or others
stops status with one line saying so.

When no serve answers (metrics.addr is not set, nothing listens there, or
serve refuses the token or the address it was asked at),
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
	cfg, err := config.Load(configFlag(c))
	if err != nil {
		return err
	}
	if addr == "" {
		addr = cfg.Metrics.Addr
	}
	ask, err := statusAsker(cfg, addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context(), statusTimeout)
	defer cancel()
	why := errors.New("metrics.addr is not set, so there is no serve to ask: set metrics.addr (such as 127.0.0.1:9464) in the config and restart serve, or pass --addr HOST:PORT")
	if addr != "" {
		st, err := ask.fetch(ctx)
		if err == nil {
			return printStatus(c.OutOrStdout(), st, asJSON, true)
		}
		why = ask.failed(err)
	}
	st, err := storeStatus(ctx, cfg)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("%w; %w", why, err)) // one line
	}
	if err := printStatus(c.OutOrStdout(), st, asJSON, false); err != nil && !errors.Is(err, errNotReady) {
		return err
	}
	return withCode(exitFailure, why)
}

// statusAsk is one ask of a serve's /status: its address, and the token
// from metrics.token_file, if the config names one.
type statusAsk struct {
	addr, tokenFile string
	token           []byte
}

// statusAsker reads the config's token, if any: a token file that cannot
// be used stops status at once, with one line saying why.
func statusAsker(cfg *config.Config, addr string) (statusAsk, error) {
	ask := statusAsk{addr: addr, tokenFile: cfg.Metrics.TokenFile}
	if ask.tokenFile == "" || addr == "" {
		return ask, nil
	}
	token, err := loadOpsToken(ask.tokenFile)
	if err != nil {
		return ask, fmt.Errorf("config %s: %w", cfg.DisplayPath(), err)
	}
	ask.token = token
	return ask, nil
}

// statusRefused is a serve that answered, and would not tell its status
// to this ask.
type statusRefused struct{ error }

// fetch asks the serve at a.addr for its /status.
func (a statusAsk) fetch(ctx context.Context) (telemetry.Status, error) {
	var st telemetry.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.addr+"/status", nil)
	if err != nil {
		return st, err
	}
	if a.token != nil {
		req.Header.Set("Authorization", "Bearer "+string(a.token))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, errors.Unwrap(err) // the url.Error's cause: the address is said once
	}
	defer resp.Body.Close()
	if err := a.refused(resp.StatusCode); err != nil {
		return st, err
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&st); err != nil {
		return st, fmt.Errorf("not a status document: %w", err)
	}
	if st.Restricted != "" {
		return st, statusRefused{fmt.Errorf("serve at http://%s wants a token for its status, and this config names none: "+
			"set metrics.token_file to the file serve reads", a.addr)}
	}
	return st, nil
}

// refused says why the listener would not answer, for the codes that
// mean it will not whatever is retried: a refused token, and an address
// it does not answer at.
func (a statusAsk) refused(code int) error {
	switch {
	case code == http.StatusUnauthorized && a.token == nil:
		return statusRefused{fmt.Errorf("serve at http://%s wants a token, and this config names none: set metrics.token_file to the file serve reads", a.addr)}
	case code == http.StatusUnauthorized:
		return statusRefused{fmt.Errorf("serve at http://%s refused the token in metrics.token_file (%s): it reads another token file", a.addr, a.tokenFile)}
	case code == http.StatusMisdirectedRequest:
		return statusRefused{fmt.Errorf("serve at http://%s answers only at its own address: pass --addr as metrics.addr names it (or localhost:PORT)", a.addr)}
	}
	return nil
}

// failed is the line status ends with when the serve could not be read.
func (a statusAsk) failed(err error) error {
	var refused statusRefused
	if errors.As(err, &refused) {
		return err
	}
	return fmt.Errorf("no serve answers at http://%s/status (%v): start 'mcpx-fw serve' with metrics.addr set in this config, or pass --addr HOST:PORT", a.addr, err)
}

// storeStatus is what the store alone knows, read as serve reads it.
func storeStatus(ctx context.Context, cfg *config.Config) (telemetry.Status, error) {
	if cfg.Log.Level != "debug" {
		cfg.Log.Level = "warn"
	}
	log, closeLog, err := newLogger(cfg)
	if err != nil {
		return telemetry.Status{}, err
	}
	defer closeLog()
	if storeMissing(cfg) {
		return telemetry.Status{}, errNoStore(cfg)
	}
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

// errNotReady: serve answered, and is not ready (exit 1).
var errNotReady = errors.New("serve is not ready")

// printStatus writes st as JSON or for a person; live says it came from a
// running serve (else from the store alone). A serve that is not ready is
// errNotReady, after the status is printed.
func printStatus(w io.Writer, st telemetry.Status, asJSON, live bool) error {
	if asJSON {
		if err := writeJSON(w, st); err != nil {
			return err
		}
	} else {
		render.Status(w, st, live)
	}
	if live && !st.Ready {
		return withCode(exitFailure, errNotReady)
	}
	return nil
}
