package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
)

// FirstBundleTimeout bounds start-up's one download when no bundle was
// persisted yet.
const FirstBundleTimeout = 30 * time.Second

// startBundle gives a bundle-configured engine its first policy. The
// bundle kept in the state dir decides at once (verified and compiled
// again; a refused one stops start-up, it is not silently replaced),
// and Watch then polls for newer ones. With none kept, start-up
// downloads once and fails if that fails: an engine never starts without
// a policy, and a clear error the supervisor restarts on is better than a
// firewall that is up but can only refuse. One attempt, not a retry loop:
// the error says at once what is wrong (address, status, signature).
func (e *Engine) startBundle(ctx context.Context) error {
	src, err := policybundle.New(*e.policyCfg.Bundle)
	if err != nil {
		return err
	}
	e.bundle = src
	e.policyState = newPolicyState(SourceBundle, src.Location())
	b, err := src.LoadPersisted()
	switch {
	case err == nil:
		p, err := loadBundlePolicy(ctx, e.policyCfg, src.PersistedPath(), b)
		if err != nil {
			return fmt.Errorf("persisted bundle %s does not compile (remove it to download afresh): %w", src.PersistedPath(), err)
		}
		e.activate(ctx, p)
		e.log.Info("policy loaded from the persisted bundle",
			zap.String("revision", p.Revision()), zap.String("path", src.PersistedPath()), zap.String("url", src.Location()))
		return nil
	case errors.Is(err, policybundle.ErrNoPersisted):
		return e.firstBundle(ctx)
	}
	return err
}

// firstBundle downloads, compiles, activates and persists the first
// bundle, within FirstBundleTimeout.
func (e *Engine) firstBundle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, FirstBundleTimeout)
	defer cancel()
	u := e.bundle.Fetch(ctx)
	switch {
	case u.Err != nil:
		return fmt.Errorf("no bundle persisted in %s and the first download from %s failed: %w", e.bundle.PersistedPath(), e.bundle.Location(), u.Err)
	case u.Bundle == nil:
		return fmt.Errorf("no bundle persisted in %s and %s served no bundle", e.bundle.PersistedPath(), e.bundle.Location())
	}
	p, err := loadBundlePolicy(ctx, e.policyCfg, e.bundle.Location(), u.Bundle)
	if err != nil {
		return fmt.Errorf("bundle from %s: %w", e.bundle.Location(), err)
	}
	e.activate(ctx, p)
	e.bundleETag = u.ETag
	if err := e.bundle.Persist(u.Raw); err != nil {
		e.log.Warn("policy bundle decides but is not persisted; a restart needs the bundle service", zap.Error(err))
	}
	e.log.Info("policy loaded from the bundle service", zap.String("revision", p.Revision()), zap.String("url", e.bundle.Location()))
	return nil
}
