package relay

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestNoHostRefusalsLogBounded: an upstream pushing sampling requests as
// fast as it likes where no host can answer them (its host declared no
// sampling; so too a 2026-07-28 host's shared session) has each refused,
// and serve's log gets at most one line a second about them, as for a
// limit's refusals, each line counting the refusals it stands for; when
// serve stops, a last line counts the rest, and the lines count them all.
func TestNoHostRefusalsLogBounded(t *testing.T) {
	const n = 300
	core, logs := observer.New(zapcore.WarnLevel)
	p := newLoggedProxy(t, Limits{InFlight: 2 * n, HostInFlight: 2 * n}, time.Minute, zap.New(core), "peer")
	host := connectHost(t, p.Proxy, "2025-11-25", nil)
	params := make([]string, n)
	for i := range params {
		params[i] = passParams
	}
	start := time.Now()
	out, err := sampleEach(t.Context(), host, "sample_each", params...)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Error == nil || o.Error.Code != refusal.CodeInternal || !strings.Contains(string(o.Error.Data), refusal.ReasonNoHost) {
			t.Fatalf("push %d got %+v, want -32603 no host", i, o)
		}
	}
	const msg = "sampling request refused: no host can answer"
	lines := logs.FilterFieldKey("why").Len() // every line about the refusals, whatever it says
	if bound := 1 + int(elapsed/admit.LogEvery); lines > bound {
		t.Errorf("%d refusals in %v logged in %d lines, want at most %d (one a second)", n, elapsed, lines, bound)
	}
	p.Close()
	var counted int64
	for _, e := range logs.FilterFieldKey("why").All() {
		if e.Message == msg || e.Message == "sampling requests refused: no host can answer" {
			counted += e.ContextMap()["refused"].(int64)
		}
	}
	if counted != n {
		t.Errorf("the lines count %d refusals, want %d", counted, n)
	}
}
