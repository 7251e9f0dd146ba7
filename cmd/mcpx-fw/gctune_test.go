package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
)

func TestGCSettingsYieldToTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		tuned bool
	}{
		{"neither set", nil, true},
		{"GOGC set", map[string]string{"GOGC": "100"}, false},
		{"GOGC off", map[string]string{"GOGC": "off"}, false},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, false},
		{"GOGC empty is still the operator's", map[string]string{"GOGC": ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			percent, limit, tuned := gcSettings(lookup)
			if tuned != tc.tuned {
				t.Fatalf("tuned = %v, want %v", tuned, tc.tuned)
			}
			if tuned && (percent != serveGCPercent || limit != serveMemoryLimit) {
				t.Errorf("settings = %d%%, %d bytes; want %d%%, %d bytes", percent, limit, serveGCPercent, serveMemoryLimit)
			}
			if !tuned && (percent != 0 || limit != 0) {
				t.Errorf("untuned settings = %d%%, %d bytes; want none", percent, limit)
			}
		})
	}
}

// releaseWhenQuiet releases once per burst of collections, after a period
// without any, and its own collection does not start another round. It
// runs in a synctest bubble: the ticker and the test's sleeps share one
// fake clock, so a busy machine cannot stretch a sleep past a period.
func TestReleaseWhenQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cycles atomic.Uint64
		releases := make(chan struct{}, 8)
		release := func() {
			cycles.Add(1) // a release collects, as debug.FreeOSMemory does
			releases <- struct{}{}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const period = 20 * time.Millisecond
		go releaseWhenQuiet(ctx, period, cycles.Load, release)

		quiet := func(d time.Duration) int {
			time.Sleep(d)
			synctest.Wait()
			n := len(releases)
			for range n {
				<-releases
			}
			return n
		}
		if n := quiet(10 * period); n != 0 {
			t.Fatalf("%d releases with no collections at all, want 0", n)
		}
		for range 10 { // a burst: collections in every period
			cycles.Add(3)
			time.Sleep(period / 2)
		}
		if n := quiet(10 * period); n != 1 {
			t.Fatalf("%d releases after one burst, want 1", n)
		}
		cycles.Add(1)
		if n := quiet(10 * period); n != 1 {
			t.Fatalf("%d releases after a second burst, want 1", n)
		}
	})
}

// startGC returns start-up's garbage at once (one forced collection and
// the heap's free pages handed back): under serve's larger goal it would
// otherwise stay until traffic grew the heap past it.
func TestStartGCReleasesStartUpGarbage(t *testing.T) {
	if _, _, tuned := gcSettings(os.LookupEnv); !tuned {
		t.Skip("GOGC or GOMEMLIMIT is set: serve leaves the collector to them")
	}
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := forcedCycles()
	startGC(ctx, zap.NewNop())
	if n := forcedCycles() - before; n < 1 {
		t.Fatalf("%d collections forced by startGC, want at least 1", n)
	}
}

// forcedCycles is how many collections this process was asked for.
func forcedCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
