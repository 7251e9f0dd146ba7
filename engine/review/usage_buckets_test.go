package review

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The parts of a window start at its start, follow one another without a
// gap, end open, and each reads whole buckets of its width.
func TestWindowPartsTileTheWindow(t *testing.T) {
	hour := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	tests := map[string]int64{
		"on an hour":                hour,
		"just after an hour":        hour + 1,
		"just before an hour":       hour - 1,
		"on a minute":               hour + int64(7*time.Minute),
		"on a second":               hour + int64(7*time.Minute+3*time.Second),
		"inside a second":           hour + int64(7*time.Minute+3*time.Second+5),
		"the epoch":                 0,
		"before the epoch":          -int64(90*time.Second) - 7,
		"a second before the epoch": -int64(time.Second),
	}
	for name, since := range tests {
		t.Run(name, func(t *testing.T) {
			parts := windowParts(since)
			if len(parts) != len(bucketWidths)+1 || parts[0].from != since || parts[0].width != 0 ||
				parts[len(parts)-1].to != math.MaxInt64 {
				t.Fatalf("parts %+v of [%d, ∞)", parts, since)
			}
			for i, p := range parts {
				if p.from > p.to || i > 0 && p.from != parts[i-1].to {
					t.Errorf("part %d %+v does not follow %+v", i, p, parts[max(i-1, 0)])
				}
				if i > 0 && p.width != bucketWidths[i-1] {
					t.Errorf("part %d has width %s, want %s", i, p.width, bucketWidths[i-1])
				}
				if p.width > 0 && p.from%int64(p.width) != 0 {
					t.Errorf("part %d starts inside a bucket of %s: %d", i, p.width, p.from)
				}
				if i < len(bucketWidths) && p.to-p.from >= int64(bucketWidths[i]) {
					t.Errorf("part %d %+v spans a whole %s", i, p, bucketWidths[i])
				}
			}
		})
	}
}

// Every read, through UsageIn and a UsageReader, equals the sum of the
// decisions rows themselves, for windows of any length and decisions
// committed in any order at times on, just before and just after the
// boundaries of buckets and windows, including times before the epoch,
// after the time read, and usages that release tokens.
func TestUsageMatchesSumOfDecisions(t *testing.T) {
	noon := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		base    time.Time
		windows map[string]time.Duration
	}{
		{"default windows", noon, usageWindows},
		{"odd windows", noon, map[string]time.Duration{
			"ninety": 90 * time.Second, "seven": 7 * time.Minute, "odd": time.Hour + 30*time.Minute + 500*time.Millisecond,
			"instant": time.Nanosecond, "day": 25 * time.Hour}},
		{"around the epoch", time.Unix(0, 0).UTC(), map[string]time.Duration{
			"minute": time.Minute, "ninety": 90 * time.Second, "hour": time.Hour}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			s := openStore(t, stateDir(t))
			reads := edgeTimes(tt.base)
			for n, at := range shuffled(rng, commitTimes(rng, tt.base, tt.windows)) {
				commitAt(t, s, fmt.Sprintf("dc-%d", n), []string{"a", "b"}[rng.IntN(2)], at, randomUsage(rng))
			}
			r, err := s.UsageReader(t.Context(), tt.windows)
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range reads {
				for _, server := range []string{"a", "b", "nobody"} {
					want := sumOfDecisions(t, s, server, tt.windows, at)
					got, err := s.UsageIn(t.Context(), server, tt.windows, at)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("UsageIn(%s, %s) (-sum of decisions +got):\n%s", server, at.Format(time.RFC3339Nano), diff)
					}
					if got, err = r.Read(t.Context(), server, at); err != nil || !cmp.Equal(want, got) {
						t.Fatalf("Read(%s, %s) = %v, %v; want %v", server, at.Format(time.RFC3339Nano), got, err, want)
					}
				}
			}
		})
	}
}

// commitTimes are times on, 1ns either side of, and randomly inside the
// seconds, minutes and hours around base, and the edges of each window
// read at edgeTimes.
func commitTimes(rng *rand.Rand, base time.Time, windows map[string]time.Duration) []time.Time {
	var out []time.Time
	for _, w := range bucketWidths {
		for k := -26; k <= 2; k += 3 {
			edge := base.Add(time.Duration(k) * w)
			out = append(out, edge.Add(-1), edge, edge.Add(1))
		}
	}
	for _, at := range edgeTimes(base) {
		for _, w := range windows {
			out = append(out, at.Add(-w-1), at.Add(-w), at.Add(-w+1))
		}
	}
	for range 150 {
		out = append(out, base.Add(time.Duration(rng.Int64N(int64(27*time.Hour)))-26*time.Hour))
	}
	return out
}

// edgeTimes are the times read: on and 1ns either side of base and of
// times a little past it, some past the last decision and some before it.
func edgeTimes(base time.Time) []time.Time {
	out := []time.Time{base.Add(-time.Hour), base.Add(time.Hour + time.Minute)}
	for _, d := range []time.Duration{0, 59*time.Second + 999*time.Millisecond, 30*time.Minute + 500*time.Millisecond} {
		out = append(out, base.Add(d-1), base.Add(d), base.Add(d+1))
	}
	return out
}

func shuffled(rng *rand.Rand, ts []time.Time) []time.Time {
	out := slices.Clone(ts)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// randomUsage is what a request stage (reserving), a result stage
// (releasing, so negative tokens) or a reconsideration (nothing) adds.
func randomUsage(rng *rand.Rand) Usage {
	reserved := rng.Int64N(2000)
	switch rng.IntN(3) {
	case 0:
		return Usage{Requests: 1, RequestedTokens: reserved, Tokens: reserved}
	case 1:
		returned := rng.Int64N(2000)
		return Usage{ReturnedTokens: returned, Tokens: returned - reserved}
	}
	return Usage{}
}

// sumOfDecisions is the definition of a window's usage: the sums over the
// server's decisions created at or after the window's start, with tokens
// never below zero.
func sumOfDecisions(t *testing.T, s *Store, server string, windows map[string]time.Duration, at time.Time) map[string]Usage {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT created_at, requests, requested_tokens,
		returned_tokens, tokens FROM decisions WHERE server = ?`, server)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make(map[string]Usage, len(windows))
	for name := range windows {
		out[name] = Usage{}
	}
	for rows.Next() {
		var created int64
		var u Usage
		if err := rows.Scan(&created, &u.Requests, &u.RequestedTokens, &u.ReturnedTokens, &u.Tokens); err != nil {
			t.Fatal(err)
		}
		for name, w := range windows {
			if created >= at.Add(-w).UnixNano() {
				out[name] = plus(out[name], u)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, u := range out {
		u.Tokens = max(u.Tokens, 0)
		out[name] = u
	}
	return out
}

func plus(u, v Usage) Usage {
	return Usage{
		Requests:        u.Requests + v.Requests,
		RequestedTokens: u.RequestedTokens + v.RequestedTokens,
		ReturnedTokens:  u.ReturnedTokens + v.ReturnedTokens,
		Tokens:          u.Tokens + v.Tokens,
	}
}

// The widths the database sums by are the widths reads assume.
func TestBucketWidthsMatchSchema(t *testing.T) {
	s := openStore(t, stateDir(t))
	commitAt(t, s, "dc-1", "a", now(), Usage{Requests: 1, Tokens: 10})
	rows, err := s.db.QueryContext(t.Context(), "SELECT DISTINCT width FROM usage_buckets ORDER BY width")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []time.Duration
	for rows.Next() {
		var w int64
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		got = append(got, time.Duration(w))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, bucketWidths) {
		t.Errorf("widths in usage_buckets %v, reads assume %v", got, bucketWidths)
	}
}

// A decision that cannot be stored adds nothing to the buckets either:
// the trigger runs inside the statement that failed.
func TestRefusedDecisionAddsNoUsage(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	commitAt(t, s, "dc-1", "a", at, Usage{Requests: 1, RequestedTokens: 100, Tokens: 100})
	_, err := s.Commit(t.Context(), Entry{
		Decision: Decision{ID: "dc-1", Server: "a", Stage: StageRequest, Outcome: "pass", CreatedAt: at},
		Usage:    Usage{Requests: 1, RequestedTokens: 900, Tokens: 900},
	})
	if err == nil {
		t.Fatal("a second decision with the same id was stored")
	}
	got, err := s.UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sumOfDecisions(t, s, "a", usageWindows, at), got); diff != "" || got["hour"].Tokens != 100 {
		t.Errorf("usage %v; want the first decision's only (-sum of decisions +got):\n%s", got, diff)
	}
}

// bucketsVersion is the schema version just before usage buckets.
const bucketsVersion = 3

// A queue written before usage buckets existed opens with its decisions
// already summed into them, and later decisions add to those sums.
func TestMigrationSumsExistingDecisions(t *testing.T) {
	dir := stateDir(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 7))
	old := openAtVersion(t, dir, bucketsVersion)
	for n, created := range commitTimes(rng, at, usageWindows) {
		u := randomUsage(rng)
		_, err := old.ExecContext(t.Context(), `INSERT INTO decisions (id, server, stage, outcome, reasons,
			review_id, created_at, requests, requested_tokens, returned_tokens, tokens)
			VALUES (?, ?, 'request', 'pass', '[]', '', ?, ?, ?, ?, ?)`,
			fmt.Sprintf("old-%d", n), []string{"a", "b"}[n%2], created.UnixNano(),
			u.Requests, u.RequestedTokens, u.ReturnedTokens, u.Tokens)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, dir)
	if version, err := s.SchemaVersion(t.Context()); err != nil || version != len(migrations) {
		t.Fatalf("user_version %d, %v; want %d", version, err, len(migrations))
	}
	wantSums(t, s, at)
	for n, created := range commitTimes(rng, at, usageWindows)[:40] {
		commitAt(t, s, fmt.Sprintf("new-%d", n), "a", created, randomUsage(rng))
	}
	wantSums(t, s, at)
}

// openAtVersion makes the queue in dir as a binary that knew only the
// first version migrations made it, and returns it open.
func openAtVersion(t *testing.T, dir string, version int) *db {
	t.Helper()
	if _, err := prepareFiles(dir); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, dir)
	ctx := context.Background()
	ms, set := migrations, fmt.Sprintf("PRAGMA user_version = %d", version)
	if db.dialect == dialectPostgres {
		ms = pgMigrations
		set = fmt.Sprintf(`CREATE TABLE schema_version (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL);
			INSERT INTO schema_version VALUES (1, %d)`, version)
	}
	for _, m := range ms[:version] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, set); err != nil {
		t.Fatal(err)
	}
	return db
}

// wantSums checks reads of both servers at times around at against the
// sums of the decisions rows.
func wantSums(t *testing.T, s *Store, at time.Time) {
	t.Helper()
	for _, read := range edgeTimes(at) {
		for _, server := range []string{"a", "b"} {
			got, err := s.UsageIn(t.Context(), server, usageWindows, read)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sumOfDecisions(t, s, server, usageWindows, read), got); diff != "" {
				t.Fatalf("usage of %s at %s (-sum of decisions +got):\n%s", server, read.Format(time.RFC3339Nano), diff)
			}
		}
	}
}
