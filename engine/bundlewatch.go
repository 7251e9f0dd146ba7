package engine

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
)

// reloadResult is the Reload* word a bundle failure is counted under.
var reloadResult = map[policybundle.Failure]string{
	policybundle.FailDownload: ReloadDownloadError,
	policybundle.FailVerify:   ReloadVerifyError,
	policybundle.FailRead:     ReloadCompileError,
}

// watchBundle starts polling the bundle service (Watch's bundle half);
// the directory is not watched. done closes when polling has stopped.
func (e *Engine) watchBundle(ctx context.Context) (<-chan struct{}, error) {
	e.log.Info("polling policy bundle", zap.String("url", e.bundle.Location()), zap.String("revision", e.Revision()))
	return e.bundle.Start(ctx, e.bundleETag, e.bundleUpdate)
}

// bundleUpdate handles one poll. A bundle that verified and compiles
// becomes the deciding policy and only then the persisted one; any failure
// leaves both as they were.
func (e *Engine) bundleUpdate(ctx context.Context, u policybundle.Update) {
	if u.Err != nil {
		e.bundleFailed(reloadResult[u.Failure], u.Err)
		return
	}
	if u.Bundle == nil {
		return // not modified
	}
	old := e.Revision()
	p, err := loadBundlePolicy(ctx, e.policyCfg, e.bundle.Location(), u.Bundle)
	defer e.notifyReload(p, err)
	if err != nil {
		e.bundleFailed(ReloadCompileError, err)
		return
	}
	e.activate(ctx, p)
	if err := e.bundle.Persist(u.Raw); err != nil {
		e.log.Warn("policy bundle decides but is not persisted; a restart loads the previous one", zap.String("revision", p.Revision()), zap.Error(err))
	}
	e.bundleRecovered(p.Revision(), old)
}

// bundleFailed counts a failed poll and logs it when it differs from the
// failure last logged: a service that stays down is one line, not one per
// poll.
func (e *Engine) bundleFailed(result string, err error) {
	e.policyState.failed(result, err, time.Now())
	if err.Error() == e.bundleErr {
		return
	}
	e.bundleErr = err.Error()
	e.log.Error("policy bundle update failed; the previous revision keeps deciding",
		zap.String("result", result), zap.String("revision", e.Revision()), zap.String("url", e.bundle.Location()), zap.Error(err))
}

// bundleRecovered logs a new revision, or the end of a failure spell.
func (e *Engine) bundleRecovered(revision, old string) {
	recovered := e.bundleErr != ""
	e.bundleErr = ""
	switch {
	case revision != old:
		e.log.Info("policy reloaded", zap.String("revision", revision), zap.String("previous", old), zap.String("url", e.bundle.Location()))
	case recovered:
		e.log.Info("policy bundle downloads again", zap.String("revision", revision), zap.String("url", e.bundle.Location()))
	}
}
