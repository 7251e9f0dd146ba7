package review_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// The engine commits each decision with what it adds to its server's
// usage; policies read the sums over sliding windows.
func ExampleStore_UsageIn() {
	tmp, _ := os.MkdirTemp("", "usage-example")
	defer os.RemoveAll(tmp)
	s, _ := review.Open(filepath.Join(tmp, "state"), nil)
	defer s.Close()
	ctx, at := context.Background(), time.Now()

	_, _ = s.Commit(ctx, review.Entry{
		Decision: review.Decision{ID: "dc-1", Server: "notes", Stage: review.StageRequest, Outcome: "pass", CreatedAt: at},
		Usage:    review.Usage{Requests: 1, RequestedTokens: 256, Tokens: 256},
	})
	u, _ := s.UsageIn(ctx, "notes", map[string]time.Duration{"hour": time.Hour}, at)
	fmt.Printf("%+v\n", u["hour"])
	// Output: {Requests:1 RequestedTokens:256 ReturnedTokens:0 Tokens:256}
}
