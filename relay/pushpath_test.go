package relay

import (
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two tests below are a pair for .ci/structure, which measures with
// their coverage the functions a legacy sampling push passes in the relay:
// those one push covers that the same session with a plain tool call does
// not. Each also checks what it does.

// TestPushPathToolCall: a legacy host's tool call, answered; no push.
func TestPushPathToolCall(t *testing.T) {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].Era = "legacy"
	var asked atomic.Int32
	host := connectHost(t, p, "2025-11-25", samplingHost(&asked))
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
}

// TestPushPathOnePush: the same, and the tool pushes one sampling request
// the shipped policy lets through, which the host answers.
func TestPushPathOnePush(t *testing.T) {
	p := newTestProxy(t, "peer")
	p.cfg.Upstreams[0].Era = "legacy"
	var asked atomic.Int32
	host := connectHost(t, p, "2025-11-25", samplingHost(&asked))
	res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if _, code := sampleThrough(t, host, "sample", samplingCases[0].params); code != 0 || asked.Load() != 1 {
		t.Fatalf("push refused with %d, host asked %d times; want one completion", code, asked.Load())
	}
}
