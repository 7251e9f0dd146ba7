package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// startChecking is serve's start-up path (startServing) as check runs it.
// Logs meant for stderr are off, so check's output is its report. When
// the review store does not exist yet (fresh), what serve would create in
// the state dir (the store, the decision log's salt, a downloaded bundle)
// is made in a temporary folder instead, removed when rt closes: a check
// leaves the state dir as it found it.
func startChecking(ctx context.Context, configPath string) (rt *runtime, fresh bool, err error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, false, err
	}
	if cfg.Log.File == "" || cfg.Log.File == "stderr" {
		cfg.Log.File = "off"
	}
	rt = &runtime{cfg: cfg}
	if fresh = storeMissing(cfg); fresh {
		if err := rt.useTemporaryStateDir(ctx); err != nil {
			rt.close()
			return nil, false, err
		}
	} else if err := rt.open(ctx); err != nil {
		rt.close()
		return nil, false, err
	}
	if err := rt.readyToServe(ctx); err != nil {
		rt.close()
		return nil, false, err
	}
	return rt, fresh, nil
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
