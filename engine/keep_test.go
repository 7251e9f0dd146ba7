package engine

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// decidedInputs commits a decision for each id and returns its kept
// input, as the engine hands them to its keeper.
func decidedInputs(t *testing.T, store *review.Store, ids ...string) []*review.KeptInput {
	t.Helper()
	out := make([]*review.KeptInput, len(ids))
	for i, id := range ids {
		d := review.Decision{ID: id, Server: "everything", Stage: review.StageRequest, Outcome: "pass", CreatedAt: time.Now()}
		if _, err := store.Commit(t.Context(), review.Entry{Decision: d}); err != nil {
			t.Fatal(err)
		}
		out[i] = &review.KeptInput{DecisionID: id, Server: d.Server, Kind: "sampling", Stage: d.Stage,
			Revision: "rev", Outcome: "pass", Input: json.RawMessage(`{"id":"` + id + `"}`), CreatedAt: d.CreatedAt}
	}
	return out
}

func openKeepStore(t *testing.T) *review.Store {
	t.Helper()
	store, err := review.Open(filepath.Join(t.TempDir(), "state"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// keptIDs are the decisions whose input the store holds.
func keptIDs(t *testing.T, store *review.Store) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for id, r := range keptOf(t, store) {
		if r.Kept {
			ids[id] = true
		}
	}
	return ids
}

// TestKeeperDropsWhenFullAndCloseWritesTheRest: an input that finds the
// queue full, or comes after close, is dropped and counted, and its
// decision stays without one; close writes every input queued before it.
func TestKeeperDropsWhenFullAndCloseWritesTheRest(t *testing.T) {
	store := openKeepStore(t)
	ins := decidedInputs(t, store, "dc-a", "dc-b", "dc-full", "dc-late")
	k := idleKeeper(store, zaptest.NewLogger(t), 2)
	for _, in := range ins[:3] {
		k.offer(in)
	}
	if n := k.Dropped(); n != 1 {
		t.Fatalf("dropped %d with a queue of 2 and 3 inputs, want 1", n)
	}
	go k.run()
	k.close()
	k.offer(ins[3])
	if n := k.Dropped(); n != 2 {
		t.Errorf("dropped %d after close, want 2", n)
	}
	if got := keptIDs(t, store); len(got) != 2 || !got["dc-a"] || !got["dc-b"] {
		t.Errorf("kept %v; want dc-a and dc-b, the two queued before close", got)
	}
}

// TestKeeperWritesABatchAfterItsInterval: an input alone is written
// keepInterval after it was queued, without a flush or a close; a flush
// writes at once what is queued.
func TestKeeperWritesABatchAfterItsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := openKeepStore(t)
		ins := decidedInputs(t, store, "dc-1", "dc-2")
		k := newKeeper(store, zaptest.NewLogger(t), keepQueueSize)
		defer k.close()
		k.offer(ins[0])
		time.Sleep(keepInterval - time.Millisecond)
		synctest.Wait()
		if got := keptIDs(t, store); len(got) != 0 {
			t.Fatalf("kept %v before the batch's interval ended", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := keptIDs(t, store); !got["dc-1"] {
			t.Fatalf("kept %v once the interval ended; want dc-1", got)
		}
		k.offer(ins[1])
		k.Flush()
		if got := keptIDs(t, store); !got["dc-2"] || k.Dropped() != 0 {
			t.Errorf("kept %v after a flush, %d dropped; want dc-2 too", got, k.Dropped())
		}
	})
}
