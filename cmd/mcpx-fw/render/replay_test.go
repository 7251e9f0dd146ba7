package render

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReplayReportHeadings: a report whose changes let nothing more
// through does not head them "other changes" (other than nothing), and a
// decision without its input is named as such in a sentence that reads.
func TestReplayReportHeadings(t *testing.T) {
	var r Replay
	r.AddReplayed("peer", "sampling", "request", "pass", "blocker", "dc-1", []string{"no"})
	r.AddNotKept(CauseNotKept, "dc-2")
	r.Sort()
	var b strings.Builder
	ReplayReport(&b, r)
	out := b.String()
	for _, want := range []string{
		"\nchanges (none lets through what the active policy blocked, held or refused):\n",
		"not replayed: 1 whose input was not kept (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "other changes") {
		t.Errorf("report heads its only changes \"other changes\":\n%s", out)
	}
}

// TestReplayReportOtherChangesFollowLoosened: below the changes that let
// something through, the rest are "other changes".
func TestReplayReportOtherChangesFollowLoosened(t *testing.T) {
	var r Replay
	r.AddReplayed("peer", "sampling", "request", "escalate", "pass", "dc-1", nil)
	r.AddReplayed("peer", "sampling", "request", "pass", "blocker", "dc-2", []string{"no"})
	r.Sort()
	var b strings.Builder
	ReplayReport(&b, r)
	out := b.String()
	loose := strings.Index(out, "would let through what the active policy blocked, held or refused:\n")
	other := strings.Index(out, "\nother changes:\n")
	if loose < 0 || other < loose {
		t.Errorf("want the loosened changes, then \"other changes\":\n%s", out)
	}
}

// TestReplayJSONLeavesOutWhatWasNotAsked: a replay of every decision of
// every server has no "since" (not year 1) and no "server" (not "").
func TestReplayJSONLeavesOutWhatWasNotAsked(t *testing.T) {
	b, err := json.Marshal(Replay{Candidate: "next", Revision: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"since", "server"} {
		if v, ok := doc[k]; ok {
			t.Errorf("--json has %q: %v; want it left out", k, v)
		}
	}
}
