package console

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// FuzzPagesKeepTheirMarkup: whatever an upstream (or the store) puts in
// the strings a page shows, the page has the same elements and attributes,
// in the same order, as with plain text in their place. The pages escape
// by hand (markup.go), so this is the rule html/template enforced before.
func FuzzPagesKeepTheirMarkup(f *testing.F) {
	for _, seed := range []string{hostile, `"><script>x</script>`, `' onmouseover='x`, "</pre><a href=javascript:x>", "&lt;b&gt;", "a\nb\tc", "]]>-->"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return // an empty field may leave out its element
		}
		if got, want := shape(t, pages(s)), shape(t, pages("text")); got != want {
			t.Fatalf("%q changed the pages' markup:\n got %s\nwant %s", s, got, want)
		}
	})
}

// pages renders the review, queue and audit pages with s in every string.
func pages(s string) string {
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	sum := Summary{ID: s, Server: s, Label: s, Kind: s, Stage: s, State: "pending", Reasons: []string{s, s}, ExpiresAt: at}
	rv := Review{Summary: sum, DecisionID: s, Show: s, Doc: s, DocNote: s, Approvable: true, Refusal: s, Answerable: true, Decided: s, Revision: s}
	var m markup
	reviewPage(&m, s, reviewView{Review: rv, Cost: Cost{Windows: []Window{{Name: s, BudgetTokens: 10}}}, Error: s, Doc: s})
	queuePage(&m, []Summary{sum, sum})
	auditPage(&m, Audit{Verified: s, Entries: []AuditEntry{{At: at, Event: s, Item: s, Server: s, Stage: s, Operator: s, Outcome: s, Decision: s, Policy: s}}})
	return m.String()
}

// shape is the sequence of tags and attribute names of page, as a browser's
// tokenizer reads it.
func shape(t *testing.T, page string) string {
	t.Helper()
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			b.WriteString("<" + tok.Data)
			for _, a := range tok.Attr {
				b.WriteString(" " + a.Key)
			}
			b.WriteString(">")
		case html.EndTagToken:
			b.WriteString("</" + z.Token().Data + ">")
		case html.CommentToken, html.DoctypeToken:
			b.WriteString("<!" + z.Token().Data + ">")
		}
	}
}
