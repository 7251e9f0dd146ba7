package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// Serve opens an escalation and waits; the operator's CLI, here a second
// Store on the same dir, approves it; serve delivers it and records so.
func Example() {
	tmp, _ := os.MkdirTemp("", "review-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "state")
	ctx := context.Background()

	serve, _ := review.Open(dir, nil)
	defer serve.Close()
	cli, _ := review.Open(dir, nil)
	defer cli.Close()

	it, _ := serve.Add(ctx, review.Item{
		Server:  "everything",
		Stage:   review.StageRequest,
		Reasons: []review.Reason{{Code: "needs_review", Message: "the policy asks a person"}},
		Request: json.RawMessage(`{"messages":[],"maxTokens":64}`),
	}, 10*time.Minute)

	go cli.Approve(ctx, it.ID, "alice", "fine")
	got, _ := serve.Wait(ctx, it.ID)
	fmt.Println(got.State, "by", got.DecidedBy)

	_, err := cli.Reject(ctx, it.ID, "bob", "too late")
	fmt.Println(err != nil)

	done, _ := serve.Finish(ctx, it.ID, review.StateDelivered, "")
	fmt.Println(done.State)
	// Output:
	// approved by alice
	// true
	// delivered
}
