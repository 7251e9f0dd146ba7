package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// replayExamples is how many decision ids a group of a replay names.
const replayExamples = 5

// Replay is what `mcpx-fw policy replay` found: the recorded decisions
// re-decided with a candidate policy, grouped by server, kind, stage and
// the two outcomes. It is also the command's --json document. It holds
// names, outcome words, reason codes and decision ids, never the text of a
// request.
type Replay struct {
	Candidate string    `json:"candidate"`        // the candidate's folder
	Revision  string    `json:"revision"`         // the candidate's revision
	Since     time.Time `json:"since,omitzero"`   // decisions made at or after this; absent: every decision
	Server    string    `json:"server,omitempty"` // absent ("") for every server
	// Decisions counts the decisions read, Replayed those decided again.
	Decisions int `json:"decisions"`
	Replayed  int `json:"replayed"`
	// Changes lists each group whose outcome the candidate changes, those
	// it loosens (Loosened) first; Unchanged each group it keeps.
	Changes   []ReplayChange `json:"changes"`
	Unchanged []ReplaySame   `json:"unchanged"`
	// NotKept counts, by cause, the decisions with no input to replay.
	NotKept []ReplayNotKept `json:"not_kept"`
}

// ReplayChange is one group of decisions whose outcome the candidate
// changes.
type ReplayChange struct {
	Server    string `json:"server"`
	Kind      string `json:"kind"`
	Stage     string `json:"stage"`
	Active    string `json:"active"`
	Candidate string `json:"candidate"`
	// Loosened: the candidate lets through (pass) what the active policy
	// blocked, held for review or refused on an error.
	Loosened bool     `json:"loosened"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"` // decision ids, oldest first
	// Reasons are the candidate's reason codes across the group.
	Reasons []string `json:"reasons"`
}

// ReplaySame is one group of decisions the candidate decides alike.
type ReplaySame struct {
	Server  string `json:"server"`
	Kind    string `json:"kind"`
	Stage   string `json:"stage"`
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// ReplayNotKept counts the decisions of one cause that had no input to
// replay.
type ReplayNotKept struct {
	// Cause is "before-policy" (decided before the policy ran: a
	// validation blocker, usage that could not be read) or "not-kept" (no
	// input stored: replay.keep was 0, it was pruned or the decision is
	// older than the store's keeping, or the input was dropped under load
	// or lost when serve stopped abruptly).
	Cause    string   `json:"cause"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// Not-kept causes.
const (
	CauseBeforePolicy = "before-policy"
	CauseNotKept      = "not-kept"
)

// Loosens reports whether a change from active to candidate lets through
// what the active policy did not.
func Loosens(active, candidate string) bool {
	return candidate == "pass" && active != "pass"
}

// AddReplayed counts one decision re-decided: its group, outcomes, id and
// the candidate's reason codes.
func (r *Replay) AddReplayed(server, kind, stage, active, candidate, id string, reasons []string) {
	r.Decisions++
	r.Replayed++
	if active == candidate {
		r.same(server, kind, stage, active)
		return
	}
	i := slices.IndexFunc(r.Changes, func(c ReplayChange) bool {
		return c.Server == server && c.Kind == kind && c.Stage == stage && c.Active == active && c.Candidate == candidate
	})
	if i < 0 {
		r.Changes = append(r.Changes, ReplayChange{Server: server, Kind: kind, Stage: stage, Active: active,
			Candidate: candidate, Loosened: Loosens(active, candidate), Examples: []string{}, Reasons: []string{}})
		i = len(r.Changes) - 1
	}
	c := &r.Changes[i]
	c.Count++
	if len(c.Examples) < replayExamples {
		c.Examples = append(c.Examples, id)
	}
	for _, code := range reasons {
		if !slices.Contains(c.Reasons, code) {
			c.Reasons = append(c.Reasons, code)
		}
	}
}

func (r *Replay) same(server, kind, stage, outcome string) {
	i := slices.IndexFunc(r.Unchanged, func(s ReplaySame) bool {
		return s.Server == server && s.Kind == kind && s.Stage == stage && s.Outcome == outcome
	})
	if i < 0 {
		r.Unchanged = append(r.Unchanged, ReplaySame{Server: server, Kind: kind, Stage: stage, Outcome: outcome})
		i = len(r.Unchanged) - 1
	}
	r.Unchanged[i].Count++
}

// AddNotKept counts a decision with no input to replay, by cause.
func (r *Replay) AddNotKept(cause, id string) {
	r.Decisions++
	i := slices.IndexFunc(r.NotKept, func(n ReplayNotKept) bool { return n.Cause == cause })
	if i < 0 {
		r.NotKept = append(r.NotKept, ReplayNotKept{Cause: cause, Examples: []string{}})
		i = len(r.NotKept) - 1
	}
	n := &r.NotKept[i]
	n.Count++
	if len(n.Examples) < replayExamples {
		n.Examples = append(n.Examples, id)
	}
}

// Sort puts the groups in the order they are printed: loosened changes
// first, then by server, kind, stage and outcomes; lists are never nil,
// so the JSON document always has them.
func (r *Replay) Sort() {
	slices.SortFunc(r.Changes, func(a, b ReplayChange) int {
		if a.Loosened != b.Loosened {
			return map[bool]int{true: -1, false: 1}[a.Loosened]
		}
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Stage, b.Stage),
			cmp.Compare(a.Active, b.Active), cmp.Compare(a.Candidate, b.Candidate))
	})
	for i := range r.Changes {
		slices.Sort(r.Changes[i].Reasons)
	}
	slices.SortFunc(r.Unchanged, func(a, b ReplaySame) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Stage, b.Stage),
			cmp.Compare(a.Outcome, b.Outcome))
	})
	slices.SortFunc(r.NotKept, func(a, b ReplayNotKept) int { return cmp.Compare(a.Cause, b.Cause) })
	r.Changes, r.Unchanged, r.NotKept = nonNil(r.Changes), nonNil(r.Unchanged), nonNil(r.NotKept)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Loosened counts the decisions the candidate would let through that the
// active policy did not.
func (r *Replay) Loosened() int {
	n := 0
	for _, c := range r.Changes {
		if c.Loosened {
			n += c.Count
		}
	}
	return n
}

// Changed counts the decisions whose outcome the candidate changes.
func (r *Replay) Changed() int {
	n := 0
	for _, c := range r.Changes {
		n += c.Count
	}
	return n
}

// ReplayReport lays r (sorted) out for a person: what the candidate would
// let through first, then the other changes, what stays, and what could
// not be replayed. Server names come from the config, the rest are words,
// codes and ids; each still passes through inert at its field.
func ReplayReport(w io.Writer, r Replay) {
	fmt.Fprintf(w, "replayed %d of %d decision(s) %s for %s with %s (revision %s)\n", r.Replayed, r.Decisions,
		replaySince(r.Since), replayServer(r.Server), inert.Line(r.Candidate), inert.Word(r.Revision))
	loose, other := splitChanges(r.Changes)
	replayChanges(w, "would let through what the active policy blocked, held or refused", loose)
	replayChanges(w, otherTitle(loose), other)
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "no decision changes")
	}
	if len(r.Unchanged) > 0 {
		fmt.Fprintln(w, "unchanged:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range r.Unchanged {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\n", inert.Word(s.Server), inert.Word(s.Kind), inert.Word(s.Stage), inert.Word(s.Outcome), s.Count)
		}
		_ = tw.Flush()
	}
	replayNotKept(w, r.NotKept)
}

func replaySince(t time.Time) string {
	if t.IsZero() {
		return "ever made"
	}
	return "made since " + t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func replayServer(s string) string {
	if s == "" {
		return "every server"
	}
	return "server " + inert.Word(s)
}

// otherTitle heads the changes that let nothing more through: "other
// changes" only below the ones that do, so it never points at nothing.
func otherTitle(loose []ReplayChange) string {
	if len(loose) == 0 {
		return "changes (none lets through what the active policy blocked, held or refused)"
	}
	return "other changes"
}

func splitChanges(cs []ReplayChange) (loose, other []ReplayChange) {
	for _, c := range cs {
		if c.Loosened {
			loose = append(loose, c)
		} else {
			other = append(other, c)
		}
	}
	return loose, other
}

func replayChanges(w io.Writer, title string, cs []ReplayChange) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintln(w, title+":")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s -> %s\t%d\t%s%s\n", inert.Word(c.Server), inert.Word(c.Kind), inert.Word(c.Stage),
			inert.Word(c.Active), inert.Word(c.Candidate), c.Count, words(c.Examples), reasonsNote(c.Reasons))
	}
	_ = tw.Flush()
}

func reasonsNote(codes []string) string {
	if len(codes) == 0 {
		return ""
	}
	return "  (" + words(codes) + ")"
}

func words(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = inert.Word(w)
	}
	return strings.Join(out, ", ")
}

func replayNotKept(w io.Writer, ns []ReplayNotKept) {
	for _, n := range ns {
		what := "decided before the policy ran (validation, or usage that could not be read)"
		if n.Cause == CauseNotKept {
			what = "whose input was not kept (replay.keep was 0, pruned, older than the store's keeping, dropped under load or lost in a crash)"
		}
		fmt.Fprintf(w, "not replayed: %d %s: %s\n", n.Count, what, words(n.Examples))
	}
}
