package relay

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// progressHost is a host session over an in-memory transport that records
// the progress it hears: the firewall's end of it, and what it heard.
func progressHost(t *testing.T) (*mcp.ServerSession, chan *mcp.ProgressNotificationParams) {
	t.Helper()
	heard := make(chan *mcp.ProgressNotificationParams, 100)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "firewall", Version: "1"}, nil).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { heard <- r.Params },
	}).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return ss, heard
}

// heardNow is what the host heard so far, once everything in the bubble
// has settled.
func heardNow(heard chan *mcp.ProgressNotificationParams) []*mcp.ProgressNotificationParams {
	synctest.Wait()
	var got []*mcp.ProgressNotificationParams
	for {
		select {
		case p := <-heard:
			got = append(got, p)
		default:
			return got
		}
	}
}

// TestReviewProgressPacing: while a review holds a call whose host asked
// for progress, the call hears serve's progress once per interval in
// which it heard nothing else, each above the last value it heard; the
// upstream's own progress passes, and resets the interval, unless it would
// go back below a value serve sent. Nothing is sent once the review's wait
// ends.
func TestReviewProgressPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss, heard := progressHost(t)
		rt := &progressRoute{ctx: context.Background(), host: ss, token: "tok"}
		p := &Proxy{cfg: Config{ReviewProgress: 10 * time.Second}, log: zap.NewNop()}
		upstream := func(v float64) error {
			return rt.pass(v, func() error {
				return ss.NotifyProgress(t.Context(), &mcp.ProgressNotificationParams{ProgressToken: "tok", Progress: v})
			})
		}
		release := p.holdCalls(withRoute(t.Context(), rt))
		time.Sleep(25 * time.Second) // serve's at 10s and 20s
		got := heardNow(heard)
		if len(got) != 2 || got[0].Progress != 0 || got[1].Progress != 0.001 ||
			got[0].Message != reviewProgressMessage || got[0].ProgressToken != "tok" {
			t.Fatalf("heard %s, want serve's 0 and 0.001 under the host's token", jsonOf(got))
		}
		if err := upstream(5); err != nil { // at 25s: the tick at 30s has nothing to do
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second) // the tick at 40s sends 5.001
		if got := heardNow(heard); len(got) != 2 || got[0].Progress != 5 || got[1].Progress != 5.001 {
			t.Fatalf("heard %s, want the upstream's 5, then serve's 5.001", jsonOf(got))
		}
		if err := upstream(5); err != errProgressBehind {
			t.Fatalf("the upstream's 5 after serve's 5.001: %v, want it dropped", err)
		}
		if err := upstream(6); err != nil {
			t.Fatal(err)
		}
		release()
		time.Sleep(time.Minute)
		if got := heardNow(heard); len(got) != 1 || got[0].Progress != 6 {
			t.Fatalf("heard %s, want only the upstream's 6", jsonOf(got))
		}
	})
}

// TestReviewProgressNeedsToken: a call whose host gave no progress token
// hears nothing however long its review, and an interval of 0 sends
// nothing to one that did.
func TestReviewProgressNeedsToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss, heard := progressHost(t)
		rt := &progressRoute{ctx: context.Background(), host: ss, token: "tok"}
		for _, tc := range []struct {
			name  string
			ctx   context.Context
			every time.Duration
		}{{"no token", t.Context(), 10 * time.Second}, {"interval 0", withRoute(t.Context(), rt), 0}} {
			p := &Proxy{cfg: Config{ReviewProgress: tc.every}, log: zap.NewNop()}
			release := p.holdCalls(tc.ctx)
			time.Sleep(time.Minute)
			release()
			if got := heardNow(heard); len(got) != 0 {
				t.Errorf("%s: heard %s, want nothing", tc.name, jsonOf(got))
			}
		}
	})
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReviewHoldsCallWithProgress: a host call held by a review hears
// serve's progress under its own token in every cell where the review
// holds it, over stdio and over HTTP: a push relayed to a host that
// receives pushes (over stdio, the call on the frame path), an input
// request asked of such a host, one handed back to a 2026-07-28 host, and
// a push bridged to one; the call completes once the review is approved.
func TestReviewHoldsCallWithProgress(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) { reviewHoldsCallWithProgress(t, over) })
	}
}

func reviewHoldsCallWithProgress(t *testing.T, over string) {
	for _, tc := range []struct {
		name, host, upstream, tool string
	}{
		{"pushed", "2025-11-25", "legacy", "sample"},
		{"input request", "2025-11-25", modernEra, "sample_input"},
		{"handed back", modernEra, modernEra, "sample_input"},
		{"bridged", modernEra, "legacy", "sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Era = tc.upstream
			p.cfg.ReviewProgress = 20 * time.Millisecond
			var asked atomic.Int32
			opts := samplingHost(&asked)
			heard := make(chan *mcp.ProgressNotificationParams, 1000)
			opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				select {
				case heard <- r.Params:
				default:
				}
			}
			var host *mcp.ClientSession
			if over == "http" {
				host = connectHTTPHost(t, serveHTTPTest(t, p), tc.host, opts)
			} else {
				host = connectHost(t, p, tc.host, opts)
			}
			done := make(chan error, 1)
			go func() {
				params := &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"params": json.RawMessage(secretParams)}}
				params.SetProgressToken("held-call")
				_, err := host.CallTool(t.Context(), params)
				done <- err
			}()
			id := pendingID(t, p.store)
			select {
			case got := <-heard:
				if got.ProgressToken != "held-call" || got.Message != reviewProgressMessage {
					t.Fatalf("heard %s, want serve's progress under the host's token", jsonOf(got))
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the held call heard no progress")
			}
			if _, err := p.store.Approve(t.Context(), id, "alice", ""); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil || asked.Load() != 1 {
				t.Fatalf("the call: %v, host asked %d times; want its completion", err, asked.Load())
			}
		})
	}
}

// TestReviewProgressStaysWithItsServer: a push an upstream makes keeps
// alive the host's calls to that upstream only. Server a's push, held for
// review, has serve send progress to the host's call to a; the host's
// call to server b, in flight meanwhile with a token of its own, hears
// only b's own progress: an upstream cannot make the firewall keep
// another server's call waiting.
func TestReviewProgressStaysWithItsServer(t *testing.T) {
	p := newTestProxy(t, "a", "b")
	p.cfg.ReviewProgress = 20 * time.Millisecond
	var asked atomic.Int32
	opts := samplingHost(&asked)
	heard := map[string]chan *mcp.ProgressNotificationParams{"a": make(chan *mcp.ProgressNotificationParams, 1000), "b": make(chan *mcp.ProgressNotificationParams, 1000)}
	opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		if ch, ok := heard[r.Params.ProgressToken.(string)]; ok {
			select {
			case ch <- r.Params:
			default:
			}
		}
	}
	host := connectHost(t, p, "2025-11-25", opts)
	call := func(name, token string, args map[string]any) chan error {
		done := make(chan error, 1)
		go func() {
			params := &mcp.CallToolParams{Name: name, Arguments: args}
			params.SetProgressToken(token)
			_, err := host.CallTool(t.Context(), params)
			done <- err
		}()
		return done
	}
	bDone := call("b__progress", "b", map[string]any{"steps": 1, "hold": "h"})
	if got := <-heard["b"]; got.Message == reviewProgressMessage {
		t.Fatalf("b's call first heard %s, want b's own step", jsonOf(got))
	}
	aDone := call("a__sample", "a", map[string]any{"params": json.RawMessage(secretParams)})
	id := pendingID(t, p.store)
	for range 3 {
		select {
		case <-heard["a"]:
		case <-time.After(10 * time.Second):
			t.Fatal("a's held call heard no progress")
		}
	}
	select {
	case got := <-heard["b"]:
		t.Fatalf("b's call heard %s while a's push waited for review", jsonOf(got))
	default:
	}
	if _, err := p.store.Approve(t.Context(), id, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; err != nil {
		t.Fatalf("a's call: %v", err)
	}
	if _, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "b__release", Arguments: map[string]any{"hold": "h"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("b's call: %v", err)
	}
}
