package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// checking is what check runs on: serve's runtime, started as startChecking
// does, and what it found on the way.
type checking struct {
	rt *runtime
	// fresh is set when the review store did not exist yet.
	fresh bool
	// missing are the servers whose program is not found, set aside from
	// rt.cfg.Servers (see setAsideMissing); names are every server's.
	missing, names []string
}

// startChecking is serve's start-up path (startServing) as check runs it.
// Logs meant for stderr are off, so check's output is its report. When
// the review store does not exist yet (fresh), what serve would create in
// the state dir (the store, the decision log's salt, a downloaded bundle)
// is made in a temporary folder instead, removed when rt closes: a check
// leaves the state dir as it found it. A server whose program is not
// found is set aside first, where serve's own look-up would stop at the
// first: check names each such server and still checks the others.
func startChecking(ctx context.Context, configPath string) (*checking, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	if cfg.Log.File == "" || cfg.Log.File == "stderr" {
		cfg.Log.File = "off"
	}
	ck := &checking{rt: &runtime{cfg: cfg}, names: cfg.ServerNames(), missing: missingPrograms(cfg)}
	if err := ck.open(ctx); err != nil {
		ck.rt.close()
		return nil, err
	}
	for _, name := range ck.missing {
		delete(cfg.Servers, name)
	}
	if err := ck.rt.readyToServe(ctx); err != nil {
		ck.rt.close()
		return nil, err
	}
	return ck, nil
}

// open opens the runtime, in a temporary state dir when the review store
// does not exist yet.
func (ck *checking) open(ctx context.Context) error {
	if ck.fresh = storeMissing(ck.rt.cfg); ck.fresh {
		return ck.rt.useTemporaryStateDir(ctx)
	}
	return ck.rt.open(ctx)
}

// missingPrograms are the command servers of cfg whose program (the first
// word of command) is neither on PATH nor a file at that path.
func missingPrograms(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.ServerNames() {
		s := cfg.Servers[name]
		if s.URL != "" {
			continue
		}
		if _, err := exec.LookPath(s.Command[0]); err != nil {
			out = append(out, name)
		}
	}
	return out
}

// missingLine is the problem line of a server whose program is not found,
// as serve's start-up says it.
func missingLine(cfg *config.Config, name string) string {
	key := "servers." + name + ".command"
	return fmt.Sprintf("%s: %s: %s", cfg.Place(key), key, programNotFound)
}

// storeMissing reports whether the SQLite review store of cfg does not
// exist yet (serve would create it). A store it cannot tell about is not
// missing: opening it says what is wrong.
func storeMissing(cfg *config.Config) bool {
	if cfg.Store.URL != "" {
		return false
	}
	_, err := os.Stat(filepath.Join(cfg.StateDir, review.FileName))
	return errors.Is(err, fs.ErrNotExist)
}

// useTemporaryStateDir opens rt with a temporary state dir in place of
// the configured one, which it names again once open; the folder is
// removed last when rt closes.
func (rt *runtime) useTemporaryStateDir(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "mcpx-fw-check-")
	if err != nil {
		return err
	}
	rt.closers = append(rt.closers, func() { _ = os.RemoveAll(tmp) })
	real := rt.cfg.StateDir
	rt.cfg.StateDir = tmp
	defer func() { rt.cfg.StateDir = real }()
	return rt.open(ctx)
}

// reportFreshStore says, when check found no review store (fresh), that
// serve will create it.
func reportFreshStore(w io.Writer, rt *runtime, fresh bool) {
	if fresh {
		fmt.Fprintf(w, "review store: %s does not exist yet; serve will create it (check created nothing)\n",
			filepath.Join(rt.cfg.StateDir, review.FileName))
	}
}
