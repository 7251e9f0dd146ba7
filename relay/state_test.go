package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// manualHost is a 2026-07-28 host that runs no input-request loop of its
// own, so a test decides what it sends back.
func manualHost(t *testing.T, p *Proxy) *mcp.ClientSession {
	return connectHost(t, p, modernEra, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
}

// askInput makes the first call of tool and returns the input_required
// answer the firewall gave.
func askInput(t *testing.T, host *mcp.ClientSession, tool string) *mcp.CallToolResult {
	t.Helper()
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"params": json.RawMessage(helloParams)}})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("first call: %+v %v, want input_required with one request", res, err)
	}
	return res
}

func retry(ctx context.Context, host *mcp.ClientSession, tool, key, state string) (*mcp.CallToolResult, error) {
	return host.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"params": json.RawMessage(helloParams)},
		RequestState: state, InputResponses: mcp.InputResponseMap{key: hiResult()}})
}

// stateKey seals the states of TestRequestStateRejected, so a case can
// open them with a sealer of its own.
var stateKey = bytes.Repeat([]byte{7}, seal.KeySize)

// TestRequestStateRejected: the state a 2026-07-28 host gets back is the
// firewall's, sealed; altered, reused, late or moved to another server or
// call, it is refused with -32602 and the upstream is not retried.
func TestRequestStateRejected(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		use        func(t *testing.T, p *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error
	}{
		{"tampered", "tampered", func(t *testing.T, _ *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			s := []byte(res.RequestState)
			s[len(s)/3] ^= 1
			_, err := retry(t.Context(), host, "alpha__sample_input", keyOf(res.InputRequests), string(s))
			return err
		}},
		{"replayed", "already used", func(t *testing.T, _ *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			if _, err := retry(t.Context(), host, "alpha__sample_input", keyOf(res.InputRequests), res.RequestState); err != nil {
				t.Fatalf("first retry: %v", err)
			}
			_, err := retry(t.Context(), host, "alpha__sample_input", keyOf(res.InputRequests), res.RequestState)
			return err
		}},
		{"expired", "expired", func(t *testing.T, p *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			later := func() time.Time { return time.Now().Add(p.cfg.StateTTL + time.Second) }
			p.sealer = seal.New(stateKey, later) // the same key, its clock past the state's expiry
			_, err := retry(t.Context(), host, "alpha__sample_input", keyOf(res.InputRequests), res.RequestState)
			return err
		}},
		{"another server", "another server", func(t *testing.T, _ *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			_, err := retry(t.Context(), host, "beta__sample_input", keyOf(res.InputRequests), res.RequestState)
			return err
		}},
		{"another call", "another call", func(t *testing.T, _ *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			_, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__sample_input",
				Arguments:    map[string]any{"params": json.RawMessage(helloParams), "rounds": 2},
				RequestState: res.RequestState, InputResponses: mcp.InputResponseMap{keyOf(res.InputRequests): hiResult()}})
			return err
		}},
		{"answer missing", "no answer", func(t *testing.T, _ *Proxy, host *mcp.ClientSession, res *mcp.CallToolResult) error {
			_, err := retry(t.Context(), host, "alpha__sample_input", "other-key", res.RequestState)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProxyOn(t, filepath.Join(t.TempDir(), "state"), stateKey, nil, "alpha", "beta")
			p.cfg.StateTTL = 300 * time.Millisecond
			host := manualHost(t, p)
			err := tc.use(t, p, host, askInput(t, host, "alpha__sample_input"))
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != refusal.CodeInvalidParams || !strings.Contains(we.Message, tc.want) {
				t.Fatalf("err = %v, want -32602 saying %q", err, tc.want)
			}
		})
	}
}

// TestUpstreamStateByteForByte: through two rounds with a 2026-07-28 host,
// the upstream gets its own requestState back exactly as it sent it, and
// the host never sees it.
func TestUpstreamStateByteForByte(t *testing.T) {
	p := newTestProxy(t, "peer")
	host := manualHost(t, p)
	args := map[string]any{"params": json.RawMessage(helloParams), "rounds": 2}
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: args})
	for round := 0; err == nil && res.NeedsInput(); round++ {
		if strings.Contains(res.RequestState, "peer-state") {
			t.Fatalf("the host saw the upstream's state: %q", res.RequestState)
		}
		res, err = host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: args,
			RequestState: res.RequestState, InputResponses: mcp.InputResponseMap{keyOf(res.InputRequests): hiResult()}})
	}
	if err != nil {
		t.Fatal(err)
	}
	var got peer.InputOutcome
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{peerStateFor(1), peerStateFor(2)}
	if len(got.States) != 2 || got.States[0] != want[0] || got.States[1] != want[1] {
		t.Errorf("upstream got states %q, want %q", got.States, want)
	}
}

// peerStateFor is the state the test upstream hands out for round n.
func peerStateFor(n int) string {
	return []string{"", "peer-state/1/ü+=&\"<>", "peer-state/2/ü+=&\"<>"}[n]
}

// TestUnsolicitedCompletionDropped: a completion a host sends without
// having been asked through the firewall never reaches the upstream, which
// asks again; the request then crosses the firewall as any other.
func TestUnsolicitedCompletionDropped(t *testing.T) {
	host := manualHost(t, newTestProxy(t, "peer"))
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample_input", Arguments: map[string]any{"params": json.RawMessage(helloParams)},
		InputResponses: mcp.InputResponseMap{"q": hiResult()}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("result %+v: want the upstream to ask again (input_required)", res)
	}
}
