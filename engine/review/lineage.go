package review

import "context"

type parentKey struct{}

// WithParent returns ctx carrying the id of the request-stage review a
// sampling request went through. A result-stage item opened under that ctx
// (by Add or Commit) links to it as its Parent, so show can name the review
// that let the request through. It travels in the context because the
// engine, which opens the item, sits between the relay that knows the
// lineage and this store, and has no other use for it.
func WithParent(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, parentKey{}, id)
}

// lineage links a result-stage item opened under a ctx from WithParent to
// that request-stage review, unless it names a parent already.
func lineage(ctx context.Context, it Item) Item {
	if id, _ := ctx.Value(parentKey{}).(string); it.Parent == "" && it.Stage == StageResult {
		it.Parent = id
	}
	return it
}
