package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/relay"
)

// checkParallel bounds how many servers check starts at once.
const checkParallel = 4

// checkErrCap and checkStderrCap bound how much of a failed start's error
// and of the server's stderr a problem line shows.
const (
	checkErrCap    = 300
	checkStderrCap = 200
)

// serverCheck is what starting one server proved: an ok line for the
// report, or a problem line.
type serverCheck struct{ ok, problem string }

// startServers starts every server of ups once as serve would (relay.Probe),
// at most checkParallel at once, each given timeout to initialize and list
// its tools; the results are in ups' order.
func startServers(ctx context.Context, rt *runtime, ups []relay.Upstream, timeout time.Duration) []serverCheck {
	out := make([]serverCheck, len(ups))
	slots := make(chan struct{}, checkParallel)
	var wg sync.WaitGroup
	for i, u := range ups {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = startServer(ctx, rt, u, timeout)
		})
	}
	wg.Wait()
	return out
}

// startServer starts u once and says how that went.
func startServer(ctx context.Context, rt *runtime, u relay.Upstream, timeout time.Duration) serverCheck {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := relay.Probe(ctx, u, rt.isolation.hide, rt.isolation.readOnly, version)
	if err == nil {
		return serverCheck{ok: fmt.Sprintf("ok: %s: %d tools (%s)", u.Name, p.Tools, howRun(u))}
	}
	why := "did not start: " + inert.Line(cut(err.Error(), checkErrCap))
	if errors.Is(err, context.DeadlineExceeded) {
		why = fmt.Sprintf("did not initialize and list its tools within %s (check --timeout)", timeout)
	}
	return serverCheck{problem: u.Name + ": " + why + stderrExcerpt(p.Stderr)}
}

// howRun is how serve runs u, for its ok line.
func howRun(u relay.Upstream) string {
	switch {
	case u.URL != "":
		return "over HTTP"
	case u.Isolated:
		return "isolated"
	}
	return "not isolated"
}

// stderrExcerpt is the end of what a server wrote to stderr, quoted and
// made inert, for its problem line; nothing when it wrote nothing.
func stderrExcerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > checkStderrCap {
		b = b[len(b)-checkStderrCap:]
	}
	return "; its stderr ends: " + inert.Quote(string(b))
}

// cut is s up to n bytes, marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
