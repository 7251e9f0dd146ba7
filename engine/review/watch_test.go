package review

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWatchSeesEachNewItemOnce: a watcher with its own Store (as the CLI in
// another shell has) reports what was pending when it started, then every
// item another Store opens, once each and in order; an item decided before
// a poll saw it, and one from another server, are not reported.
func TestWatchSeesEachNewItemOnce(t *testing.T) {
	dir := stateDir(t)
	synctest.Test(t, func(t *testing.T) {
		serve, cli := openStore(t, dir), openStore(t, dir)
		cli.PollInterval = time.Second
		waiting := mustAdd(t, serve, sampleItem("alpha"), time.Hour)

		ctx, stop := context.WithCancel(t.Context())
		seen := make(chan string, 10)
		done := make(chan error)
		go func() {
			done <- cli.Watch(ctx, Filter{Server: "alpha"}, func(it Item) error { seen <- it.ID; return nil })
		}()
		synctest.Wait()
		first := mustAdd(t, serve, sampleItem("alpha"), time.Hour)
		mustAdd(t, serve, sampleItem("beta"), time.Hour)
		gone := mustAdd(t, serve, sampleItem("alpha"), time.Hour)
		if _, err := serve.Reject(t.Context(), gone.ID, "bob", ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // three polls
		second := mustAdd(t, serve, sampleItem("alpha"), time.Hour)
		time.Sleep(3 * time.Second)
		stop()
		if err := <-done; err != nil {
			t.Fatalf("Watch: %v", err)
		}
		close(seen)
		var got []string
		for id := range seen {
			got = append(got, id)
		}
		if diff := cmp.Diff([]string{waiting.ID, first.ID, second.ID}, got); diff != "" {
			t.Errorf("watched (-want +got):\n%s", diff)
		}
	})
}
