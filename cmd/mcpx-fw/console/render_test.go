package console

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// hostile is markup and characters an upstream may write: a script, an
// event handler, a style, a terminal escape, a bidi override and an
// isolate, zero-width characters, a NUL and a C1 control.
const hostile = "<script>window.__mcpxfwCanary=1</script><img src=x onerror=\"window.__mcpxfwCanary=2\"><style>*{}</style>" +
	"\x1b[2J\u202eexe.txt\u2066iso\u2069 zw\u200b\ufeff nul\x00 c1\u009b"

// hostileReview puts hostile in every string of a review.
type hostileReview struct{ queueOnly }

func (hostileReview) Review(_ context.Context, id string) (Review, error) {
	return Review{Summary: Summary{ID: id, Server: hostile, Label: hostile, Kind: hostile, Stage: hostile, State: "pending",
		Reasons: []string{hostile}}, DecisionID: hostile, Waived: []string{hostile}, Show: hostile, Doc: hostile, DocNote: hostile, Refusal: hostile,
		Decided: hostile, Revision: hostile}, nil
}

// TestUpstreamTextIsInertInHTML: what an upstream wrote reaches the page
// as text, never markup, and with no control, bidi or invisible character
// as it is.
func TestUpstreamTextIsInertInHTML(t *testing.T) {
	rv, _ := (&hostileReview{}).Review(context.Background(), "rv-1")
	var m markup
	reviewPage(&m, "t", reviewView{Review: rv, Doc: rv.Doc, Error: hostile})
	out := m.String()
	if strings.Contains(out, "<script>window") || strings.Contains(out, "<img") || strings.Contains(out, "<style>") {
		t.Error("upstream markup reached the page as markup")
	}
	for _, r := range out {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff') {
			t.Errorf("the page holds %U as it is", r)
		}
	}
	if !regexp.MustCompile(`\\u202e`).MatchString(out) {
		t.Error("the bidi override is not shown as an escape")
	}
	if regexp.MustCompile(`<script>|<style|<[^>]*\son[a-z]+=|<[^>]*\sstyle=`).MatchString(out) {
		t.Error("the page has inline script or style")
	}
}

// TestReviewPageShowsWaivers: the page lists the baseline reasons the
// server's policy waived under the reasons that hold the review.
func TestReviewPageShowsWaivers(t *testing.T) {
	rv := Review{Summary: Summary{ID: "rv-1", State: "pending", Reasons: []string{"[looked-at] every answer"}},
		Waived: []string{"[asks-for-secrets] the prompt asks for a password"}}
	var m markup
	reviewPage(&m, "t", reviewView{Review: rv})
	want := "<li>[looked-at] every answer</li><li class=\"waived\">waived by the server's policy: [asks-for-secrets] the prompt asks for a password</li>"
	if out := m.String(); !strings.Contains(out, want) {
		t.Errorf("the page lacks %s:\n%s", want, out)
	}
}
