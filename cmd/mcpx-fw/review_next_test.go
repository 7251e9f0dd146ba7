package main

import (
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
)

// The approve command's last words say who answers next, in the words of
// the item's kind: an approved elicitation goes to the user, not a model.
func TestNextStepNamesTheKind(t *testing.T) {
	for _, tc := range []struct {
		kind, result, want string
	}{
		{"sampling", "", "serve checks the request once more and the host's model answers it"},
		{"sampling", `{"role":"assistant"}`, "serve checks the completion once more and returns it to the upstream"},
		{"elicitation", "", "serve checks the request once more and the user answers it"},
		{"elicitation", `{"action":"accept"}`, "serve checks the user's answer once more and returns it to the upstream"},
		{"roots", "", "serve checks the request once more and the host answers it"},
		{"roots", `{"roots":[]}`, "serve checks the roots list once more and returns it to the upstream"},
	} {
		if got := nextStep(rendertest.KindItem(t, tc.kind, `{}`, tc.result)); got != tc.want {
			t.Errorf("%s, result %q: %q, want %q", tc.kind, tc.result, got, tc.want)
		}
	}
}
