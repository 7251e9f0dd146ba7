package review

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestAddGetRoundTrip(t *testing.T) {
	s := openStore(t, stateDir(t))
	in := sampleItem("everything")
	in.ID, in.State, in.DecidedBy = "rv-chosen-by-caller", StateApproved, "mallory" // ignored
	before := time.Now()
	added := mustAdd(t, s, in, 10*time.Minute)

	if !ValidID(added.ID) {
		t.Errorf("ID %q is not rv- and 16 lowercase hex", added.ID)
	}
	if added.State != StatePending || added.Owner != s.owner || added.DecidedBy != "" {
		t.Errorf("Add: state %s owner %q decided by %q, want pending, %q, nobody",
			added.State, added.Owner, added.DecidedBy, s.owner)
	}
	if added.CreatedAt.Before(before.Add(-time.Second)) || added.ExpiresAt.Sub(added.CreatedAt) != 10*time.Minute {
		t.Errorf("Add: created %v expires %v", added.CreatedAt, added.ExpiresAt)
	}
	if diff := cmp.Diff(added, mustGet(t, s, added.ID)); diff != "" {
		t.Errorf("Get differs from what Add returned (-add +get):\n%s", diff)
	}
	if string(mustGet(t, s, added.ID).Request) != string(in.Request) {
		t.Error("Request was not kept byte for byte")
	}
}

func TestAddResultStageLinksItsRequest(t *testing.T) {
	s := openStore(t, stateDir(t))
	first := mustAdd(t, s, sampleItem("everything"), time.Minute)
	second := sampleItem("everything")
	second.Stage, second.Parent = StageResult, first.ID
	second.Result = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`)
	got := mustGet(t, s, mustAdd(t, s, second, time.Minute).ID)
	if got.Parent != first.ID || got.Stage != StageResult || string(got.Result) != string(second.Result) {
		t.Errorf("result stage item: parent %q stage %q result %s", got.Parent, got.Stage, got.Result)
	}
}

func TestAddRefusesBadItems(t *testing.T) {
	s := openStore(t, stateDir(t))
	ok := sampleItem("everything")
	for _, tc := range []struct {
		name    string
		edit    func(*Item)
		timeout time.Duration
		want    string
	}{
		{"zero timeout", func(*Item) {}, 0, "timeout 0s is not positive"},
		{"no server", func(it *Item) { it.Server = "" }, time.Minute, "server is empty"},
		{"bad stage", func(it *Item) { it.Stage = "both" }, time.Minute, `stage "both"`},
		{"no request", func(it *Item) { it.Request = nil }, time.Minute, "request is empty"},
		{"result stage without result", func(it *Item) { it.Stage = StageResult }, time.Minute, "without a result"},
		{"request stage with result", func(it *Item) { it.Result = json.RawMessage(`{}`) }, time.Minute, "with a result"},
		{"invalid request JSON", func(it *Item) { it.Request = json.RawMessage(`{"a":`) }, time.Minute, "request is not valid JSON"},
		{"invalid context JSON", func(it *Item) { it.Context = json.RawMessage(`nope`) }, time.Minute, "context is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := ok
			tc.edit(&it)
			_, err := s.Add(t.Context(), it, tc.timeout)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Add: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if items, err := s.List(t.Context(), Filter{All: true}); err != nil || len(items) != 0 {
		t.Errorf("after refused adds: %d items, %v; want none", len(items), err)
	}
}

func TestUnknownIDIsNotFound(t *testing.T) {
	s := openStore(t, stateDir(t))
	ctx, id := t.Context(), "rv-0000000000000000"
	calls := map[string]func() error{
		"Get":     func() error { _, err := s.Get(ctx, id); return err },
		"Approve": func() error { _, err := s.Approve(ctx, id, "alice", ""); return err },
		"Reject":  func() error { _, err := s.Reject(ctx, id, "alice", ""); return err },
		"Finish":  func() error { _, err := s.Finish(ctx, id, StateDelivered, ""); return err },
		"Wait":    func() error { _, err := s.Wait(ctx, id); return err },
		"History": func() error { _, err := s.History(ctx, id); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s(unknown): %v, want ErrNotFound", name, err)
			continue
		}
		if want := "review " + id + ": not found"; err.Error() != want {
			t.Errorf("%s(unknown) says %q, want %q", name, err, want)
		}
	}
}

func TestListFiltersAndOrder(t *testing.T) {
	s := openStore(t, stateDir(t))
	var ids []string
	for _, server := range []string{"a", "b", "a", "b"} {
		ids = append(ids, mustAdd(t, s, sampleItem(server), time.Hour).ID)
	}
	if _, err := s.Reject(t.Context(), ids[2], "alice", "no"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{ids[0], ids[1], ids[3]}},
		{Filter{All: true}, ids},
		{Filter{Server: "a"}, []string{ids[0]}},
		{Filter{All: true, Server: "a"}, []string{ids[0], ids[2]}},
		{Filter{Server: "nobody"}, nil},
	} {
		items, err := s.List(t.Context(), tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("List(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}
}

// PendingIDs names exactly the items List lists, closing due ones first.
func TestPendingIDsMatchList(t *testing.T) {
	inBubble(t, func(t *testing.T, s *Store) {
		var ids []string
		for range 4 {
			ids = append(ids, mustAdd(t, s, sampleItem("a"), time.Hour).ID)
		}
		expiring := mustAdd(t, s, sampleItem("a"), time.Millisecond).ID
		if _, err := s.Approve(t.Context(), ids[1], "alice", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reject(t.Context(), ids[3], "alice", "no"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		got, err := s.PendingIDs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{ids[0]: true, ids[2]: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("PendingIDs (-want +got):\n%s", diff)
		}
		if it := mustGet(t, s, expiring); it.State != StateExpired {
			t.Errorf("the due item is %s, want expired", it.State)
		}
		items, err := s.List(t.Context(), Filter{})
		if err != nil || len(items) != len(want) {
			t.Errorf("List gave %d items, %v; PendingIDs %d", len(items), err, len(want))
		}
	})
}

func TestItemJSONNamesMatchTheCLI(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("everything"), time.Hour)
	b, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "server", "stage", "state", "created_at", "expires_at", "reasons", "request"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	for _, k := range []string{"result", "decided_at", "decided_by", "finished_at"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON of a pending request-stage item has %q: %s", k, b)
		}
	}
	if string(m["reasons"]) == "null" {
		t.Error(`reasons is null, want an array`)
	}
}

// TestLogsCarryNoPromptText guards the rule that request and result text
// never reach a log line, through every operation that logs.
func TestLogsCarryNoPromptText(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s, err := openBackend(stateDir(t), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const secret = "SECRET-PROMPT-TEXT"
	in := sampleItem("everything")
	in.Request = json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"` + secret + `"}}]}`)
	a := mustAdd(t, s, in, time.Hour)
	b := mustAdd(t, s, in, time.Hour)
	if _, err := s.Approve(t.Context(), a.ID, "alice", "fine"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(t.Context(), a.ID, StateDelivered, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject(t.Context(), b.ID, "bob", "no"); err != nil {
		t.Fatal(err)
	}
	if logs.Len() < 4 {
		t.Fatalf("%d log entries, want one per transition", logs.Len())
	}
	for _, e := range logs.All() {
		enc, _ := json.Marshal(e.ContextMap())
		if strings.Contains(e.Message+string(enc), secret) {
			t.Errorf("log entry %q carries the prompt: %s", e.Message, enc)
		}
		if e.ContextMap()["review_id"] == nil {
			t.Errorf("log entry %q has no review_id", e.Message)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		newID():                  true,
		"rv-0123456789abcdef":    true,
		"rv-0123456789ABCDEF":    false,
		"rv-0123456789abcde":     false,
		"rv-0123456789abcdef0":   false,
		"xx-0123456789abcdef":    false,
		"rv-0123456789abcdeg":    false,
		"rv-../../../etc/passwd": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
