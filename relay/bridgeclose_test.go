package relay

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgedPlaceHeldUntilItsProcessEnds: a hostile upstream whose
// bridged calls answer at once but whose processes stay on after their
// sessions close (deaf to the end of their input and to SIGTERM) cannot
// make the firewall run more of its processes than
// limits.max_bridged_calls_per_server: a call's place is given back only
// once its process has gone, and the call after it is refused until then.
func TestBridgedPlaceHeldUntilItsProcessEnds(t *testing.T) {
	p, _ := bridgedProxy(t)
	p.cfg.MaxBridgedPerServer = 1
	host := manualHost(t, p)
	if _, err := host.ListTools(t.Context(), nil); err != nil { // the host's own upstream is running
		t.Fatal(err)
	}
	base := upstreamProcesses(t)
	linger := &mcp.CallToolParams{Name: "linger", Arguments: map[string]any{"ms": 4000}}
	if res, err := host.CallTool(t.Context(), linger); err != nil || res.IsError {
		t.Fatalf("first call: %v %v", res, err)
	}
	refused := 0
	for range 3 {
		_, err := host.CallTool(t.Context(), linger)
		var we *jsonrpc.Error
		switch {
		case err == nil:
		case errors.As(err, &we) && strings.Contains(we.Message, "limits.max_bridged_calls_per_server"):
			refused++
		default:
			t.Fatalf("call: %v", err)
		}
		if n := upstreamProcesses(t) - base; n > 1 {
			t.Fatalf("%d bridged processes of one server run, over limits.max_bridged_calls_per_server (1)", n)
		}
	}
	if refused != 3 {
		t.Errorf("%d of 3 calls refused while the first call's process still ran, want 3", refused)
	}
	waitFor(t, func() bool { return upstreamProcesses(t) == base && p.bridges.sessions() == 0 })
	waitFor(t, func() bool { // its place is free again once its process has gone
		res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		return err == nil && !res.IsError
	})
}
