package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

func auditCommand() *cobra.Command {
	var since, server string
	var asJSON, verify bool
	c := &cobra.Command{
		Use:   "audit",
		Short: "List the audit log of reviews, or verify its hash chain",
		Long: `Every transition of every review (opened, approved, edited, answered,
rejected, expired, abandoned, delivered, failed, and erased by retention) is
one append-only entry: who (the operator, or - for the firewall itself), when,
the decision id, the policy revision, digests of the request and completion,
and the outcome. Each entry holds the hash of the one before it.

  mcpx-fw audit                     every entry, oldest first
  mcpx-fw audit --since 24h         the last day (or --since 2026-11-01)
  mcpx-fw audit --server github --json   one JSON object per line, for shipping
  mcpx-fw audit --verify            check the chain; names an edited, inserted
                                    or deleted entry and exits 1

Rows wider than the terminal go on in rows that start with ┆ (--width N
cuts them at N columns; with no terminal they are left whole).

--verify prints the chain head; an operator who notes it (or ships the log
elsewhere) can also tell a log cut back and rebuilt by someone with write
access to the state dir.`,
		Args: args(0, "mcpx-fw audit [--since 24h] [--server NAME] [--json] [--width N] | mcpx-fw audit --verify"),
		RunE: func(c *cobra.Command, _ []string) error {
			if verify && (since != "" || server != "" || asJSON || c.Flags().Changed("width")) {
				return usageError{errors.New("--verify checks the whole log and takes no other flag\nTry: mcpx-fw audit --verify")}
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return usageError{fmt.Errorf("--since: %w\nTry: mcpx-fw audit --since 24h", err)}
			}
			scr, err := tableLayoutFor(c)
			if err != nil {
				return err
			}
			return withQueue(c, "", func(ctx context.Context, rt *runtime) error {
				if verify {
					return verifyAudit(ctx, c.OutOrStdout(), rt.store)
				}
				entries, err := rt.store.Audit(ctx, review.AuditFilter{Since: from, Server: server})
				if err != nil {
					return err
				}
				kinds := auditKinds(ctx, rt.store, entries)
				if asJSON {
					return writeJSONLines(c.OutOrStdout(), withKinds(entries, kinds))
				}
				w := scr.Rows(c.OutOrStdout())
				renderAudit(w, entries, kinds)
				return w.Flush()
			})
		},
	}
	c.Flags().StringVar(&since, "since", "", "entries from this long ago (24h, 7d) or this time (2026-11-01, RFC 3339)")
	c.Flags().StringVar(&server, "server", "", "only this server's entries")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	c.Flags().BoolVar(&verify, "verify", false, "verify the hash chain; exit 1 naming the first broken entry")
	addTableWidthFlag(c)
	return c
}

func verifyAudit(ctx context.Context, w io.Writer, st *review.Store) error {
	head, n, err := st.VerifyAudit(ctx)
	var ce *review.ChainError
	if errors.As(err, &ce) {
		return withCode(exitFailure, fmt.Errorf("%w (after %d good entries)", err, n))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "ok: %d entries, chain intact; head #%d %s\n", n, head.Seq, head.Hash)
	return nil
}

// parseSince reads --since: a duration back from now (Go's units plus d
// for days), a date, or an RFC 3339 time. "" is the beginning.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (24h, 7d) nor a date (2026-11-01)", s)
}

// renderAudit prints the log as a table, with digests and hashes shortened
// to what a person compares by eye (--json has them whole). Every cell
// goes through inert. No cell holds what an upstream wrote (ids, the
// configured server name, the OS user, digests, fixed words); its rows
// are cut for the screen as list's are (the caller's RowWriter), so a
// wide table reads the same way on every terminal.
func renderAudit(w io.Writer, entries []review.AuditEntry, kinds map[string]string) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no audit entries")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tREVIEW\tSERVER\tKIND\tSTAGE\tOPERATOR\tOUTCOME\tDECISION\tREQUEST\tRESULT\tPOLICY")
	for _, e := range entries {
		cells := []string{string(e.Event), e.ItemID, e.Server, orDash(kinds[e.ItemID]), e.Stage, orDash(e.Operator), string(e.Outcome), e.DecisionID,
			short(e.RequestDigest), short(e.ResultDigest), short(e.PolicyRevision)}
		for i, c := range cells {
			cells[i] = inert.Line(c)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", e.Seq, e.At.Local().Format(time.DateTime), strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

// auditKinds is the kind of each item the entries name, read from the
// item (an audit entry predates kinds and its hash covers only its own
// fields); an item no longer in the store has none.
func auditKinds(ctx context.Context, st *review.Store, entries []review.AuditEntry) map[string]string {
	kinds := map[string]string{}
	for _, e := range entries {
		if _, ok := kinds[e.ItemID]; ok {
			continue
		}
		kinds[e.ItemID] = ""
		if it, err := st.Get(ctx, e.ItemID); err == nil {
			kinds[e.ItemID] = string(render.ItemKind(it))
		}
	}
	return kinds
}

// auditLine is one line of audit --json: the entry, and the kind of its
// item (not part of the hash chain).
type auditLine struct {
	review.AuditEntry
	Kind string `json:"kind,omitempty"`
}

func withKinds(entries []review.AuditEntry, kinds map[string]string) []auditLine {
	out := make([]auditLine, len(entries))
	for i, e := range entries {
		out[i] = auditLine{e, kinds[e.ItemID]}
	}
	return out
}

func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return orDash(d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeJSONLines prints one JSON object a line, each through inert.JSON.
func writeJSONLines[T any](w io.Writer, items []T) error {
	for _, it := range items {
		if err := writeJSONLine(w, it); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(inert.JSON(b), '\n'))
	return err
}
