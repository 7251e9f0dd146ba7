package review

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// deadOwner returns the owner token of a process that has run and exited.
func deadOwner(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$") // this test binary, running no tests
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a short-lived process: %v", err)
	}
	return owner{pid: cmd.Process.Pid, start: "1"}.String()
}

func TestSelfTokenNamesThisProcess(t *testing.T) {
	o, ok := parseOwner(selfToken())
	if !ok || o.pid != os.Getpid() {
		t.Fatalf("selfToken %q does not parse to this pid %d", selfToken(), os.Getpid())
	}
	if runtime.GOOS == "linux" && (o.start == "" || o.ns == "") {
		t.Errorf("selfToken %q lacks the start time or pid namespace", selfToken())
	}
	if !ownerAlive(selfToken()) {
		t.Error("this process is reported dead")
	}
}

func TestOwnerAlive(t *testing.T) {
	self, _ := parseOwner(selfToken())
	type tc struct {
		name  string
		token string
		alive bool
	}
	cases := []tc{
		{"this process", selfToken(), true},
		{"exited process", deadOwner(t), false},
		{"unparseable token", "serve-on-another-host", true},
		{"pid only", strconv.Itoa(os.Getpid()), true},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases,
			tc{"reused pid (start time differs)", owner{pid: self.pid, start: self.start + "0", ns: self.ns}.String(), false},
			tc{"another pid namespace", owner{pid: 999999, start: "1", ns: "1"}.String(), true},
		)
	}
	for _, c := range cases {
		if got := ownerAlive(c.token); got != c.alive {
			t.Errorf("%s (%q): alive = %v, want %v", c.name, c.token, got, c.alive)
		}
	}
}

func TestParseOwner(t *testing.T) {
	for tok, want := range map[string]owner{
		"42":        {pid: 42},
		"42:777":    {pid: 42, start: "777"},
		"42:777:99": {pid: 42, start: "777", ns: "99"},
	} {
		got, ok := parseOwner(tok)
		if !ok || got != want || got.String() != tok {
			t.Errorf("parseOwner(%q) = %+v, %v; want %+v and the same token back", tok, got, ok, want)
		}
	}
	for _, tok := range []string{"", "x", "0", "-1:2", "1:2:3:4"} {
		if _, ok := parseOwner(tok); ok {
			t.Errorf("parseOwner(%q) accepted a malformed token", tok)
		}
	}
}

// TestDeadOwnerAbandons: a serve process died with a pending item; the
// operator's CLI lists it as abandoned, cannot approve it, and serve's
// start-up sweep counts it.
func TestDeadOwnerAbandons(t *testing.T) {
	sqliteOnly(t, "owners named by process id; on PostgreSQL waits will be held by lease")
	dir := stateDir(t)
	serve, cli := openStore(t, dir), openStore(t, dir)
	serve.owner = deadOwner(t) // as if the process that added these had died
	orphan := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	orphan2 := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	approved := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	serve.owner = selfToken()
	live := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	if _, err := serve.db.Exec(`UPDATE items SET state = 'approved', decided_by = 'alice' WHERE id = ?`, approved.ID); err != nil {
		t.Fatal(err)
	}

	if n, err := cli.AbandonOrphans(t.Context()); err != nil || n != 3 {
		t.Fatalf("AbandonOrphans = %d, %v; want 3", n, err)
	}
	if n, err := cli.AbandonOrphans(t.Context()); err != nil || n != 0 {
		t.Errorf("second AbandonOrphans = %d, %v; want 0", n, err)
	}
	pending, err := cli.List(t.Context(), Filter{})
	if err != nil || len(pending) != 1 || pending[0].ID != live.ID {
		t.Errorf("List(pending) = %v, %v; want only %s", pending, err, live.ID)
	}
	for id, want := range map[string]State{orphan.ID: StateAbandoned, approved.ID: StateFailed, live.ID: StatePending} {
		if got := mustGet(t, cli, id); got.State != want {
			t.Errorf("%s is %s, want %s", id, got.State, want)
		}
	}
	_, err = cli.Approve(t.Context(), orphan.ID, "alice", "")
	wantDecided(t, err, StateAbandoned, "abandoned at", NoteOwnerGone)
	_, err = serve.Finish(t.Context(), approved.ID, StateDelivered, "")
	wantDecided(t, err, StateFailed, "and then failed")
	wantHistory(t, cli, orphan2.ID, "", StatePending, StateAbandoned)
}

// TestDeadOwnerAbandonsOnRead: no sweep ran; reading one item is enough.
func TestDeadOwnerAbandonsOnRead(t *testing.T) {
	sqliteOnly(t, "owners named by process id; on PostgreSQL waits will be held by lease")
	dir := stateDir(t)
	serve, cli := openStore(t, dir), openStore(t, dir)
	serve.owner = deadOwner(t)
	a := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	b := mustAdd(t, serve, sampleItem("everything"), time.Hour)
	if got := mustGet(t, cli, a.ID); got.State != StateAbandoned || got.Note != NoteOwnerGone {
		t.Errorf("Get: %s (%q), want abandoned", got.State, got.Note)
	}
	_, err := cli.Reject(t.Context(), b.ID, "bob", "")
	wantDecided(t, err, StateAbandoned, NoteOwnerGone)
}
