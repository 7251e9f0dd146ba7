package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// reloadDebounce is how long the watcher waits after the last change before
// reloading: editors save in several steps (write a temporary file, rename,
// chmod) and a git checkout touches many files at once; one reload should
// see the finished state.
const reloadDebounce = 50 * time.Millisecond

// Watch reloads the policy whenever something under its directory changes,
// including directories created later. A policy that compiles replaces the
// old one atomically (requests in flight finish on the one they started
// with); one that does not is logged once and the old one keeps deciding.
// The directory itself may go away and come back (deleted and restored, or
// a new copy renamed into place): the watcher also watches its parent and
// picks the directory up again.
//
// With a bundle configured, Watch polls the bundle service instead (see
// watchBundle) and the directory is not watched. The embedded shipped
// policies cannot change while the process runs: nothing is watched.
//
// A shadow policy (Config.Shadow) is watched, or its bundle polled, the
// same way beside the active policy; stop stops both, and a failure to
// watch it is logged, not returned.
//
// Watch returns once the watcher is set up. It runs until ctx ends or
// stop is called; stop returns only once no reload is under way and none
// will start, so a caller that closes the log and the store after it
// (serve does) is never written to by a late reload.
func (e *Engine) Watch(ctx context.Context) (stop func(), err error) {
	stopShadow := e.watchShadow(ctx)
	stopActive, err := e.watchActive(ctx)
	return func() { stopActive(); stopShadow() }, err
}

// watchShadow starts watching the shadow policy, if any.
func (e *Engine) watchShadow(ctx context.Context) (stop func()) {
	if e.shadow == nil {
		return func() {}
	}
	sub := e.shadow.eng
	if sub.policyCfg.Bundle != nil && sub.bundle == nil {
		return func() {} // its bundle's config was refused at start
	}
	stop, err := sub.watchActive(ctx)
	if err != nil {
		sub.log.Warn("shadow policy hot reload is off", zap.Error(err))
	}
	return stop
}

// watchActive is Watch for the policy e decides with.
func (e *Engine) watchActive(ctx context.Context) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var done <-chan struct{}
	switch {
	case e.bundle != nil:
		done, err = e.watchBundle(ctx)
	case sourceOf(e.policyCfg).fsys != nil:
		done = closedDone()
	default:
		done, err = e.watchDir(ctx)
	}
	if err != nil {
		cancel()
		return func() {}, err
	}
	return func() { cancel(); <-done }, nil
}

// closedDone is the done channel of a watch that has nothing to do.
func closedDone() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}

// watchDir is Watch's directory half; done closes when its loop has
// returned.
func (e *Engine) watchDir(ctx context.Context) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch policy dir: %w", err)
	}
	root := filepath.Clean(e.policyCfg.Dir)
	if err := watchTree(w, root); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch policy dir: %w", err)
	}
	if err := w.Add(filepath.Dir(root)); err != nil {
		e.log.Warn("a policy dir that is removed and put back will not be seen", zap.String("dir", root), zap.Error(err))
	}
	e.log.Info("watching policy dir", zap.String("dir", root), zap.String("revision", e.Revision()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.watchLoop(ctx, w, root)
	}()
	return done, nil
}

// watchTree watches root and every directory below it but hidden ones
// (.git), because fsnotify watches one directory at a time.
func watchTree(w *fsnotify.Watcher, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			return nil
		case path != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		}
		return w.Add(path)
	})
}

// watchLoop turns file events under root (and root's own creation or
// removal) into debounced reloads until ctx ends.
func (e *Engine) watchLoop(ctx context.Context, w *fsnotify.Watcher, root string) {
	defer w.Close()
	debounce := time.NewTimer(reloadDebounce)
	debounce.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !underRoot(root, ev.Name) {
				continue // a sibling in the parent directory
			}
			e.noteEvent(w, ev)
			debounce.Reset(reloadDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			e.log.Warn("policy watcher", zap.Error(err))
		case <-debounce.C:
			lastErr = e.reload(ctx, lastErr)
		}
	}
}

// underRoot reports whether an event's path is root or inside it. The
// parent directory is watched only for root coming and going.
func underRoot(root, name string) bool {
	name = filepath.Clean(name)
	return name == root || strings.HasPrefix(name, root+string(filepath.Separator))
}

// noteEvent starts watching a directory created under the policy dir (or
// the policy dir itself, put back), so files written into it later are
// seen too.
func (e *Engine) noteEvent(w *fsnotify.Watcher, ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) {
		return
	}
	if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
		if err := watchTree(w, ev.Name); err != nil {
			e.log.Warn("watch new policy folder", zap.String("dir", ev.Name), zap.Error(err))
		}
	}
}

// reload compiles the policy directory again and swaps the result in. A
// failure is logged once per distinct error (an editor saving the same
// broken file again adds no noise) and the previous policy keeps deciding.
// It returns the error text now standing, "" after a success.
func (e *Engine) reload(ctx context.Context, lastErr string) string {
	old := e.Revision()
	p, err := LoadPolicy(ctx, e.policyCfg)
	defer e.notifyReload(p, err)
	if err != nil {
		e.policyState.failed(ReloadCompileError, err, time.Now())
		if err.Error() != lastErr {
			e.log.Error("policy reload failed; the previous policy keeps deciding",
				zap.String("revision", old), zap.String("dir", e.policyCfg.Dir), zap.Error(err))
		}
		return err.Error()
	}
	if p.Revision() == old {
		e.policyState.loaded(old, time.Now())
		return ""
	}
	e.warm(ctx, p)
	e.policy.Store(p)
	e.policyState.loaded(p.Revision(), time.Now())
	e.log.Info("policy reloaded", zap.String("revision", p.Revision()), zap.String("previous", old))
	return ""
}

// notifyReload tells a test's hook about a reload attempt.
func (e *Engine) notifyReload(p *Policy, err error) {
	if e.reloaded == nil {
		return
	}
	rev := ""
	if p != nil {
		rev = p.Revision()
	}
	e.reloaded(rev, err)
}

// warm evaluates a minimal input once with p, so the first real request
// after a load does not pay for OPA's first-evaluation setup (about a
// millisecond). Its outcome does not matter. A shadow's policy is not
// warmed: nothing waits for its first evaluation.
func (e *Engine) warm(ctx context.Context, p *Policy) {
	if !e.cold {
		p.warm(ctx)
	}
}

// warm is Engine.warm's evaluation.
func (p *Policy) warm(ctx context.Context) {
	_, _ = p.Evaluate(ctx, buildInput(StageRequest, Request{}, nil, nil, nil, nil))
}
