package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"go.uber.org/zap"
)

// serve's garbage collector settings, used unless the environment sets
// GOGC or GOMEMLIMIT. serve keeps a live heap of a few MiB while every
// message it relays is decoded into fresh buffers, so at Go's default
// (GOGC=100, a 4 MiB floor) it collects dozens of times a second under
// load, the collector's workers taking about a quarter of its CPU. A goal
// four times the live heap cuts that to a few, and the memory limit bounds
// what the larger goal may cost: near the limit the collector runs as
// often as it must, whatever GOGC says. The larger goal keeps memory after
// a burst that the default would have given back, so once collections
// stop (traffic has stopped) serve returns what it does not use to the OS
// (releaseWhenQuiet). BENCHMARKS.md has the measurements behind these
// numbers.
const (
	serveGCPercent   = 400
	serveMemoryLimit = 64 << 20
	quietPeriod      = 2 * time.Second
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

// startGC tunes the collector for serve, returns start-up's garbage, and
// returns memory after bursts until ctx ends; or says that the
// environment's settings stand. serve calls it once start-up is done and
// before the relay starts.
func startGC(ctx context.Context, log *zap.Logger) {
	percent, limit, tuned := tuneGC()
	if !tuned {
		log.Info("garbage collector tuned by the environment", zap.String("GOGC", os.Getenv("GOGC")), zap.String("GOMEMLIMIT", os.Getenv("GOMEMLIMIT")))
		return
	}
	log.Info("garbage collector", zap.Int("gc_percent", percent), zap.Int64("memory_limit_bytes", limit),
		zap.Duration("release_after_quiet", quietPeriod))
	// Start-up's garbage (the config, the policies' compilation) is
	// returned now, once: with the goal four times the live heap it would
	// stay until traffic grew the heap past it, so an idle serve held about
	// twice its live heap. Now, and not after the first quiet period: a
	// collection scans every goroutine's stack, reading the binary's
	// function tables for each frame; before the relay's goroutines exist
	// it reads little that start-up's own collections had not, where a
	// release after the first quiet period made about 4 MiB more of those
	// tables resident than it returned.
	debug.FreeOSMemory()
	go releaseWhenQuiet(ctx, quietPeriod, gcCycles, debug.FreeOSMemory)
}

// releaseWhenQuiet calls release once after each stretch of collections
// is followed by a period with none: under load the heap is reused, and
// once traffic stops what it grew to is handed back. cycles counts
// collections so far; release's own collection does not count as work.
func releaseWhenQuiet(ctx context.Context, period time.Duration, cycles func() uint64, release func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	last, busy := cycles(), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := cycles()
		if now != last {
			busy = true
		} else if busy {
			release()
			busy, now = false, cycles()
		}
		last = now
	}
}

// gcCycles is the number of collections this process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
