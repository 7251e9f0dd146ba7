package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inputProxy is a proxy whose one upstream speaks 2026-07-28 whatever the
// host speaks, so its sampling arrives as input requests.
func inputProxy(t *testing.T) *Proxy {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].Era = modernEra
	return p
}

// TestLoadShedding: an upstream that defers a call with a bare requestState
// is retried after a pause, with its state, up to three times.
func TestLoadShedding(t *testing.T) {
	for _, era := range bothEras {
		for _, tc := range []struct {
			times int
			want  string
			code  int64
		}{{2, "retried 2 times", 0}, {4, "", refusal.CodeInternal}} {
			t.Run(fmt.Sprintf("%s/deferred %d times", era, tc.times), func(t *testing.T) {
				var asked atomic.Int32
				host := connectHost(t, inputProxy(t), era, samplingHost(&asked))
				res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "shed", Arguments: map[string]any{"times": tc.times}})
				var we *jsonrpc.Error
				switch {
				case tc.code != 0 && (!errors.As(err, &we) || we.Code != tc.code || !strings.Contains(we.Message, "deferring")):
					t.Fatalf("err = %v, want %d saying the upstream kept deferring", err, tc.code)
				case tc.code == 0 && err != nil:
					t.Fatal(err)
				case tc.code == 0 && res.Content[0].(*mcp.TextContent).Text != tc.want:
					t.Fatalf("result %q, want %q", res.Content[0].(*mcp.TextContent).Text, tc.want)
				}
			})
		}
	}
}

// TestInputRoundCap: an upstream that keeps asking for input past
// limits.max_rounds fails the host's call with a message naming the limit.
func TestInputRoundCap(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			p := inputProxy(t)
			p.cfg.MaxRounds = 2
			var asked atomic.Int32
			host := connectHost(t, p, era, samplingHost(&asked))
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: map[string]any{
				"params": json.RawMessage(helloParams), "rounds": 3}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != refusal.CodeInternal || !strings.Contains(we.Message, "limits.max_rounds") {
				t.Fatalf("err = %v, want -32603 naming limits.max_rounds", err)
			}
			if asked.Load() != 2 {
				t.Errorf("host asked %d times, want 2", asked.Load())
			}
		})
	}
}

// TestOtherInputsPassThrough: elicitation and roots entries the policy
// permits reach the host, and its answers the upstream, unchanged, beside
// a completion, all in one round, for a host of either era.
func TestOtherInputsPassThrough(t *testing.T) {
	for _, era := range bothEras {
		t.Run(era, func(t *testing.T) {
			var asked atomic.Int32
			opts := samplingHost(&asked)
			opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{}
			opts.Capabilities.RootsV2 = &mcp.RootCapabilities{}
			opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts)
			client.AddRoots(&mcp.Root{URI: "file:///work/ada", Name: "ada"})
			host := connectClient(t, inputProxy(t), era, client)
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_all", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			for _, want := range []string{`"name":"Ada"`, `file:///work/ada`, `"text":"hi"`} {
				if !strings.Contains(got, want) {
					t.Errorf("upstream got %s, want %s in it", got, want)
				}
			}
			if asked.Load() != 1 {
				t.Errorf("host's model asked %d times, want 1", asked.Load())
			}
		})
	}
}
