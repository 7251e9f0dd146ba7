package hostconfig

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectScope: in a ~/.claude.json of several projects and much
// state of Claude Code's own, a project's local scope connects: only its
// entries change (the user scope, the other projects and every other key
// stay byte for byte), the file reads back with its servers through
// mcpx-fw, a second connect changes nothing, and a restore gives the
// bytes back.
func TestProjectScope(t *testing.T) {
	data := readFixture(t, "claude-user.json")
	h, err := Hosts["claude-code"].Project("/home/me/src/shop")
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Connect(data, testServe)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "claude-user.connected.json"), got)
	allConnected(t, h, got, "postgres", "sentry")
	if changed, err := h.ChangedSince(data, got); err != nil || changed != "" {
		t.Errorf("bytes outside the entries changed: %q, %v", changed, err)
	}
	for _, other := range []Host{Hosts["claude-code"], project(t, "/home/me/src/blog")} {
		before, _ := other.Parse(data)
		after, _ := other.Parse(got)
		if len(before) != 1 || len(after) != 1 || after[0].Connected || after[0].Command != before[0].Command {
			t.Errorf("%s: %+v became %+v", other.Where(), before, after)
		}
	}
	if twice, err := h.Connect(got, testServe); err != nil || !bytes.Equal(twice, got) {
		t.Errorf("a second connect changed the file (%v):\n%s", err, Diff("claude.json", got, twice))
	}
	writeRestore(t, data, got)
}

// TestProjectScopeChangedSince: Claude Code's own writes to the file
// after connect (a count, another project's state) and a server added to
// the project are named; the project's rewritten entries alone are not.
func TestProjectScopeChangedSince(t *testing.T) {
	data := readFixture(t, "claude-user.json")
	h := project(t, "/home/me/src/shop")
	connected, _ := h.Connect(data, testServe)
	for _, tc := range []struct{ from, to, want string }{
		{`"numStartups": 184`, `"numStartups": 185`, "numStartups"},
		{`"lastCost": 0.4182`, `"lastCost": 0.5`, "projects"},
		{`"sentry": {`, `"sentry2": {`, `the names under projects["/home/me/src/shop"].mcpServers`},
	} {
		current := strings.Replace(string(connected), tc.from, tc.to, 1)
		if got, err := h.ChangedSince(data, []byte(current)); err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.to, got, err, tc.want)
		}
	}
}

// TestProjectScopeMissing: a project the file does not hold has no
// servers, and only Claude Code has the scope.
func TestProjectScopeMissing(t *testing.T) {
	servers, err := project(t, "/home/me/src/none").Parse(readFixture(t, "claude-user.json"))
	if err != nil || len(servers) != 0 {
		t.Errorf("%d servers, %v", len(servers), err)
	}
	if _, err := Hosts["cursor"].Project("/x"); err == nil {
		t.Error("cursor has a project scope")
	}
	if _, err := Hosts["claude-code"].Project("rel/dir"); err == nil {
		t.Error("a relative project path was taken")
	}
	if got := filepath.ToSlash(project(t, "/x").where("linux", "/h", "")); got != "/h/.claude.json" {
		t.Errorf("default file %s", got)
	}
}

func project(t *testing.T, dir string) Host {
	t.Helper()
	h, err := Hosts["claude-code"].Project(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEntryNamesExact: a member spelt like one that starts the server but
// in other case ("Command") is one the host ignores: the server is the one
// "command" starts, and the connected entry, which keeps the other member,
// still reads as starting mcpx-fw.
func TestEntryNamesExact(t *testing.T) {
	h := Hosts["cursor"]
	in := []byte(`{"mcpServers": {"a": {"command": "real-server", "Command": "decoy", "ARGS": ["x"]}}}`)
	servers, err := h.Parse(in)
	if err != nil || servers[0].Command != "real-server" || servers[0].Args != nil {
		t.Fatalf("parsed %+v, %v", servers, err)
	}
	got, _ := h.Connect(in, testServe)
	allConnected(t, h, got, "a")
	if !bytes.Contains(got, []byte(`"Command": "decoy"`)) {
		t.Errorf("the host's own member was dropped: %s", got)
	}
}
