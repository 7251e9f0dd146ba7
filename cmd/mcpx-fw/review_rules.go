package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// The decision rules every operator front end shares (the review commands
// and the console): each re-decides what the operator asks as serve would,
// then records it in the store, whose audit entry names the operator. A
// front end only gathers the arguments and words the outcome, so an
// approval can never mean less in a browser than in a terminal.

// approveChecked approves a pending item that approvable has passed, as
// it is (e nil) or with the operator's edit, once the policy has run
// again on what would go through.
func approveChecked(ctx context.Context, rt *runtime, it review.Item, e *review.Edit, note string) (review.Item, error) {
	if err := recheck(ctx, rt, it, e); err != nil {
		return it, err
	}
	var err error
	var got review.Item
	if e == nil {
		got, err = rt.store.Approve(ctx, it.ID, operator(), note)
	} else {
		got, err = rt.store.ApproveEdited(ctx, it.ID, operator(), note, *e)
	}
	if err != nil {
		return got, decideError(err)
	}
	return got, nil
}

// rejectItem rejects the review id names (or the decision that opened
// it), keeping reason with the decision; the upstream never sees it.
func rejectItem(ctx context.Context, rt *runtime, id, reason string) (review.Item, error) {
	it, err := getItem(ctx, rt, id)
	if err != nil {
		return it, err
	}
	if it, err = rt.store.Reject(ctx, it.ID, operator(), reason); err != nil {
		return it, decideError(err)
	}
	return it, nil
}

// answerItem settles a pending sampling request with the operator's own
// completion, once answerable allows it and the policy passes the
// completion as it would the model's.
func answerItem(ctx context.Context, rt *runtime, id string, completion json.RawMessage, note string) (review.Item, error) {
	it, err := getItem(ctx, rt, id)
	if err != nil {
		return it, err
	}
	if err := answerable(rt, it); err != nil {
		return it, err
	}
	s, err := render.ItemRequest(it)
	if err != nil {
		return it, err
	}
	v := rt.engine.Reconsider(ctx, s, completion, engine.Approval{DecisionID: it.DecisionID, By: operator(), At: time.Now()})
	if err := refused(it, v, "the answer is refused"); err != nil {
		return it, err
	}
	if it, err = rt.store.Answer(ctx, it.ID, operator(), note, completion); err != nil {
		return it, decideError(err)
	}
	return it, nil
}
