package main

import (
	"os"
	"runtime/debug"

	"go.uber.org/zap"
)

// serve's garbage collector settings, used unless the environment sets
// GOGC or GOMEMLIMIT. serve keeps a live heap of a few MiB while every
// message it relays is decoded into fresh buffers, so at Go's default
// (GOGC=100, a 4 MiB floor) it collects dozens of times a second under load
// and spends more time collecting than relaying. A goal four times the live
// heap cuts that to a few, and the memory limit bounds what the larger goal
// may cost: near the limit the collector runs as often as it must, whatever
// GOGC says. BENCHMARKS.md has the measurements behind both numbers.
const (
	serveGCPercent   = 400
	serveMemoryLimit = 64 << 20
)

// gcSettings is what serve sets, given the environment: nothing when the
// operator tuned the collector with GOGC or GOMEMLIMIT.
func gcSettings(lookup func(string) (string, bool)) (percent int, limit int64, tuned bool) {
	if _, ok := lookup("GOGC"); ok {
		return 0, 0, false
	}
	if _, ok := lookup("GOMEMLIMIT"); ok {
		return 0, 0, false
	}
	return serveGCPercent, serveMemoryLimit, true
}

// tuneGC applies gcSettings to this process and reports whether it did.
func tuneGC() (percent int, limit int64, tuned bool) {
	percent, limit, tuned = gcSettings(os.LookupEnv)
	if tuned {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
	return percent, limit, tuned
}

// logGC tunes the collector for serve and says so, or says that the
// environment's settings stand.
func logGC(log *zap.Logger) {
	percent, limit, tuned := tuneGC()
	if !tuned {
		log.Info("garbage collector tuned by the environment", zap.String("GOGC", os.Getenv("GOGC")), zap.String("GOMEMLIMIT", os.Getenv("GOMEMLIMIT")))
		return
	}
	log.Info("garbage collector", zap.Int("gc_percent", percent), zap.Int64("memory_limit_bytes", limit))
}
