package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// Status lays st out for a person. st may come from a listener that
// is not the operator's serve (a spoofed address, a compromised host) and
// a status string may quote what a peer said (a store's error), so every
// string in it passes through inert at the field: a name through Word, a
// text through Line, which keeps it on its one line, so a value cannot
// start a line that reads as the status's own ("ready: yes").
func Status(w io.Writer, st telemetry.Status, live bool) {
	if live {
		renderReady(w, st)
		renderPolicy(w, st.Policy)
		renderShadow(w, st.Shadow)
		renderReplay(w, st.Replay)
		renderUpstreams(w, st.Upstreams)
	} else {
		fmt.Fprintln(w, "serve: not reachable; what the store alone knows:")
	}
	renderPending(w, st.Reviews)
	renderBudgets(w, st.Budgets)
	if live {
		renderLog(w, st.DecisionLog)
	}
	renderStore(w, st.Store)
}

func renderReady(w io.Writer, st telemetry.Status) {
	if st.Ready {
		fmt.Fprintln(w, "ready: yes")
		return
	}
	fmt.Fprintln(w, "ready: NO")
	for _, c := range st.Checks {
		if !c.OK {
			fmt.Fprintf(w, "  %s: %s\n", inert.Line(c.Name), inert.Line(c.Error))
		}
	}
}

func renderPolicy(w io.Writer, p *telemetry.Policy) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "policy: revision %s from %s %s, deciding since %s\n", inert.Word(p.Revision), inert.Word(p.Source), inert.Line(p.Location), Ago(p.LoadedAt))
	words := make([]string, 0, len(p.Reloads))
	for r, n := range p.Reloads {
		words = append(words, fmt.Sprintf("%s %d", inert.Word(r), n))
	}
	sort.Strings(words)
	fmt.Fprintf(w, "  load attempts: %s\n", strings.Join(words, ", "))
	if p.LastError != "" {
		fmt.Fprintf(w, "  last reload FAILED %s (revision %s keeps deciding): %s\n", Ago(p.LastErrorAt), inert.Word(p.Revision), inert.Folded(p.LastError))
	}
}

// renderShadow shows the shadow policy: its revision (or that none has
// loaded), and how its outcomes compared with the active policy's,
// disagreements by active -> shadow outcome.
func renderShadow(w io.Writer, s *telemetry.Shadow) {
	if s == nil {
		return
	}
	if s.Revision == "" {
		fmt.Fprintf(w, "shadow policy: FAILED to load from %s %s (the active policy decides alone)\n", inert.Word(s.Source), inert.Line(s.Location))
	} else {
		fmt.Fprintf(w, "shadow policy: revision %s from %s %s, judging since %s, never enforced\n", inert.Word(s.Revision), inert.Word(s.Source), inert.Line(s.Location), Ago(s.LoadedAt))
	}
	if s.LastError != "" {
		fmt.Fprintf(w, "  last load FAILED %s: %s\n", Ago(s.LastErrorAt), inert.Folded(s.LastError))
	}
	pairs := make([]string, 0, len(s.Disagreements))
	for _, d := range s.Disagreements {
		pairs = append(pairs, fmt.Sprintf("%s -> %s %d", inert.Word(d.Active), inert.Word(d.Shadow), d.Count))
	}
	if len(pairs) == 0 {
		pairs = append(pairs, "none")
	}
	fmt.Fprintf(w, "  agreed %d, disagreed (active -> shadow): %s\n", s.Agreements, strings.Join(pairs, ", "))
	if s.Errors+s.Dropped > 0 {
		fmt.Fprintf(w, "  shadow errors %d (timeouts %d), not evaluated %d\n", s.Errors, s.Timeouts, s.Dropped)
	}
}

// renderReplay shows what serve keeps for replay, when it keeps
// anything: for how long, within what bound, and what it lost or deleted
// since it started.
func renderReplay(w io.Writer, r *telemetry.Replay) {
	if r == nil {
		return
	}
	keep := time.Duration(r.KeepSeconds * float64(time.Second))
	fmt.Fprintf(w, "replay: each decision's policy input kept %s, within %d bytes (%.1f MiB); since start %d not kept, %d deleted past replay.max_bytes\n",
		keep, r.MaxBytes, float64(r.MaxBytes)/(1<<20), r.Dropped, r.Trimmed)
}

func renderUpstreams(w io.Writer, ups []telemetry.Upstream) {
	fmt.Fprintln(w, "upstreams:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, u := range ups {
		state := "up"
		if !u.Up {
			state = "DOWN: " + inert.Line(u.Reason)
			if u.DownSince != nil {
				state = "DOWN since " + Ago(*u.DownSince) + ": " + inert.Line(u.Reason)
			}
		}
		fmt.Fprintf(tw, "  %s\t%d sessions\t%s\n", inert.Word(u.Server), u.Sessions, state)
	}
	tw.Flush()
}

func renderPending(w io.Writer, ps []telemetry.PendingStatus) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "reviews pending: none")
		return
	}
	fmt.Fprintln(w, "reviews pending:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "  %s\t%s\t%d\toldest %s\n", inert.Word(p.Server), inert.Word(p.Stage), p.Count, (time.Duration(p.OldestAgeSeconds) * time.Second).String())
	}
	tw.Flush()
}

func renderBudgets(w io.Writer, bs []telemetry.BudgetStatus) {
	if len(bs) == 0 {
		return
	}
	fmt.Fprintln(w, "budgets:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SERVER\tWINDOW\tREQUESTS\tTOKENS\tREQUESTED\tRETURNED")
	for _, b := range bs {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\n", inert.Word(b.Server), inert.Word(b.Window), b.Requests, b.Tokens, b.RequestedTokens, b.ReturnedTokens)
	}
	tw.Flush()
}

func renderLog(w io.Writer, sinks []telemetry.LogSink) {
	if len(sinks) == 0 {
		fmt.Fprintln(w, "decision log: off")
		return
	}
	for _, s := range sinks {
		fmt.Fprintf(w, "decision log %s: %d written, %d lost\n", inert.Word(s.Sink), s.Written, s.Lost)
	}
}

func renderStore(w io.Writer, s telemetry.StoreStatus) {
	state := "answering"
	if s.Writable != nil && *s.Writable {
		state = "writable"
	}
	if s.Error != "" {
		state = "FAILING: " + inert.Line(s.Error)
	}
	fmt.Fprintf(w, "store: %s, %s\n", inert.Word(s.Backend), state)
}

// ago is t and how long ago it was, to the second.
func Ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format(time.DateTime), time.Since(t).Round(time.Second))
}
