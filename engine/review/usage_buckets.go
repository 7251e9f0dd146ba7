package review

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// bucketWidths are the widths of the usage_buckets the database keeps for
// every server, finest first: migration 4 lists the same ones. Each is a
// whole multiple of the one before, so the buckets of one width exactly
// tile the span between two boundaries of the next.
var bucketWidths = []time.Duration{time.Second, time.Minute, time.Hour}

// part is one piece of a window that a single index range scan sums: the
// decisions rows themselves (width 0) with created_at in [from, to), or the
// buckets of one width whose start is in [from, to).
type part struct {
	width    time.Duration
	from, to int64
}

// windowParts splits the window [since, ∞) into whole pieces: the
// decisions up to the first whole second, the second buckets up to the
// first whole minute, the minute buckets up to the first whole hour, and
// the hour buckets from there on. A window reads at most a second of
// decisions, 59 second buckets, 59 minute buckets and one hour bucket per
// hour it spans, however many decisions it holds. The window has no upper
// end, as a plain sum over created_at >= since has none: decisions stamped
// later than the read (another process's clock, a clock stepped back)
// count too.
func windowParts(since int64) []part {
	parts := make([]part, 0, len(bucketWidths)+1)
	p := part{from: since}
	for _, w := range bucketWidths {
		p.to = ceilTo(since, w)
		parts = append(parts, p)
		p = part{width: w, from: p.to}
	}
	p.to = math.MaxInt64
	return append(parts, p)
}

// ceilTo rounds t (Unix nanoseconds) up to a whole multiple of w, the start
// of the first bucket of width w at or after t. Go's % keeps the sign of t,
// hence the two cases.
func ceilTo(t int64, w time.Duration) int64 {
	r := t % int64(w)
	switch {
	case r > 0:
		return t - r + int64(w)
	case r < 0:
		return t - r
	}
	return t
}

// partSums is the SELECT that sums one part of window number w: one row
// of w and the part's four sums (NULL when the part is empty). Its
// arguments are the server and the part's bounds.
func partSums(w int, p part) string {
	sel := fmt.Sprintf("SELECT %d AS w, SUM(requests) AS requests, SUM(requested_tokens) AS requested_tokens, "+
		"SUM(returned_tokens) AS returned_tokens, SUM(tokens) AS tokens", w)
	if p.width == 0 {
		return sel + " FROM decisions WHERE server = ? AND created_at >= ? AND created_at < ?"
	}
	return sel + fmt.Sprintf(" FROM usage_buckets WHERE server = ? AND width = %d AND start >= ? AND start < ?",
		p.width.Nanoseconds())
}

// usageSQL is one row: a placeholder column, so the statement is valid
// and makes its row even without windows, then four sums per window, each
// adding up the sums of that window's parts. A read is a single step
// however many parts it has. The parts do not depend on the time read,
// only their bounds do, so the text is the same for every read and is
// prepared once.
func usageSQL(windows int) string {
	sums, parts := []string{"0"}, []string{}
	for w := range windows {
		for _, col := range []string{"requests", "requested_tokens", "returned_tokens", "tokens"} {
			sums = append(sums, fmt.Sprintf("COALESCE(SUM(CASE WHEN w = %d THEN %s END), 0)", w, col))
		}
		for _, p := range windowParts(0) {
			parts = append(parts, partSums(w, p))
		}
	}
	query := "SELECT " + strings.Join(sums, ", ")
	if len(parts) > 0 {
		query += " FROM (\n" + strings.Join(parts, "\nUNION ALL ") + "\n) AS parts"
	}
	return query
}
