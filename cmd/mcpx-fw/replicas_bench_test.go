package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// Approvals each iteration of BenchmarkApproveToDelivery makes through a
// store of its own, and through the CLI.
const (
	deliveryByStore = 60
	deliveryByCLI   = 15
)

// BenchmarkApproveToDelivery is P7: how long a held request waits, once
// approved from another process, before the serve that holds it delivers
// it to the host, on a PostgreSQL store (a throwaway cluster; skipped
// without PostgreSQL). serve holds one escalated request at a time; the
// benchmark, as another replica or an operator's shell would, approves it
// through a Store of its own (store-…: from the approval's return to the
// host being asked) and with `mcpx-fw review approve` (cli-…: from exec
// of the command to the host being asked: the CLI's start, its policy
// re-check and commit, and the wake-up). p50 and p99, nearest rank. Run
// with -benchtime 1x: each iteration makes 60 + 15 approvals.
func BenchmarkApproveToDelivery(b *testing.B) {
	storeURL := newDatabase(b)
	s := newBenchServe(b)
	f, err := os.OpenFile(s.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	_, werr := fmt.Fprintf(f, "store:\n  url: %q\n", storeURL)
	if err := errors.Join(werr, f.Close()); err != nil {
		b.Fatal(err)
	}
	asked := make(chan time.Time, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{benchBinary(), "serve", "--config", s.config},
		Answer: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			asked <- time.Now()
			return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`), nil
		}})
	if err != nil {
		b.Fatalf("start serve: %v", err)
	}
	defer h.Close()
	st := openURLStore(b, storeURL)

	var byStore, byCLI []time.Duration
	for b.Loop() {
		for i := range deliveryByStore + deliveryByCLI {
			cli := i >= deliveryByStore
			took := approveOne(b, ctx, h, st, s.config, asked, cli)
			if cli {
				byCLI = append(byCLI, took)
			} else {
				byStore = append(byStore, took)
			}
		}
	}
	ms := func(ds []time.Duration, p int) float64 {
		sorted := slices.Sorted(slices.Values(ds))
		i := (len(sorted)*p + 99) / 100
		return float64(sorted[min(max(i-1, 0), len(sorted)-1)].Microseconds()) / 1e3
	}
	b.ReportMetric(ms(byStore, 50), "store-p50-ms")
	b.ReportMetric(ms(byStore, 99), "store-p99-ms")
	b.ReportMetric(ms(byCLI, 50), "cli-p50-ms")
	b.ReportMetric(ms(byCLI, 99), "cli-p99-ms")
}

// approveOne has the upstream push one request the policy holds, waits
// until it is pending, approves it (through st, or with the CLI), and
// returns the time from the approval to the host being asked.
func approveOne(b *testing.B, ctx context.Context, h *peer.Host, st *review.Store, cfg string, asked <-chan time.Time, cli bool) time.Duration {
	b.Helper()
	called := make(chan error, 1)
	go func() {
		res, err := h.CallTool(ctx, "sample", map[string]any{"params": json.RawMessage(secretRequest)})
		if err == nil && !json.Valid([]byte(res.Text)) {
			err = fmt.Errorf("sample: %s", res.Text)
		}
		called <- err
	}()
	var id string
	for deadline := time.Now().Add(time.Minute); id == ""; time.Sleep(2 * time.Millisecond) {
		items, err := st.List(ctx, review.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		if len(items) > 0 {
			id = items[0].ID
		}
		if time.Now().After(deadline) {
			b.Fatal("no review pending a minute after the push")
		}
	}
	var start time.Time
	if cli {
		start = time.Now()
		if res := runQuiet(ctx, "review", "approve", id, "--config", cfg); res.code != 0 {
			b.Fatalf("review approve: exit %d: %s", res.code, res.stderr)
		}
	} else {
		if _, err := st.Approve(ctx, id, "bench", ""); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
	}
	var at time.Time
	select {
	case at = <-asked:
	case <-time.After(time.Minute):
		b.Fatal("the approved request was not delivered within a minute")
	}
	if err := <-called; err != nil {
		b.Fatal(err)
	}
	return max(at.Sub(start), 0)
}
