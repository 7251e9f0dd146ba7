package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// claudeState are Claude Code's own writes to ~/.claude.json while it
// runs, all outside the server entries: a count, a history entry
// appended, a project added.
var claudeState = [][2]string{
	{`"numStartups": 184`, `"numStartups": 185`},
	{`{"display": "why does checkout time out?", "pastedContents": {}}`,
		`{"display": "why does checkout time out?", "pastedContents": {}},` + "\n        " + `{"display": "and the refunds?", "pastedContents": {}}`},
	{`"projects": {`, `"projects": {` + "\n    " + `"/srv/new": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": false},`},
}

// TestDisconnectKeepsHostState: ~/.claude.json connected in user scope
// and one project's, then written by Claude Code outside the entries:
// disconnecting either scope puts back its entries alone (golden), keeps
// the other scope connected and the backup with it; disconnecting the
// other then gives the original file with Claude Code's writes (what
// Unconnected gives at once), and the backup is no longer needed; a third
// disconnect finds nothing connected.
func TestDisconnectKeepsHostState(t *testing.T) {
	data := readFixture(t, "claude-user.json")
	user, shop := Hosts["claude-code"], project(t, "/home/me/src/shop")
	current := edited(t, connected(t, shop, connected(t, user, data)), claudeState)
	want := edited(t, data, claudeState)
	if got, err := user.Unconnected(data, current); err != nil || !bytes.Equal(got, want) {
		t.Errorf("unconnected (%v):\n%s", err, Diff("claude.json", want, got))
	}
	for _, tc := range []struct {
		name          string
		first, second Host
		restored      []string
	}{
		{"user", user, shop, []string{"memory"}},
		{"shop", shop, user, []string{"postgres", "sentry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.first.Disconnect(data, current)
			if err != nil || !slices.Equal(d.Restored, tc.restored) || d.Unknown != nil {
				t.Fatalf("restored %q, unknown %q, %v", d.Restored, d.Unknown, err)
			}
			golden(t, filepath.Join("testdata", "claude-user.disconnected-"+tc.name+".json"), d.Data)
			if !user.BackupNeeded(data, d.Data) {
				t.Error("the backup is not kept for the scope still connected")
			}
			d, err = tc.second.Disconnect(data, d.Data)
			if err != nil || !bytes.Equal(d.Data, want) {
				t.Fatalf("both scopes disconnected (%v):\n%s", err, Diff("claude.json", want, d.Data))
			}
			if user.BackupNeeded(data, d.Data) {
				t.Error("the backup is kept with nothing connected")
			}
			if again, err := tc.first.Disconnect(data, d.Data); err != nil || again.Restored != nil || !bytes.Equal(again.Data, want) {
				t.Errorf("a second disconnect: restored %q, %v", again.Restored, err)
			}
		})
	}
}

// TestDisconnectAfterHostRewrite: a host that rewrites its whole file in
// its own layout (a Node program's JSON.stringify(config, null, 2), what
// json.Indent of the compact file gives here) keeps connect's entries as
// they were written, when the file was in that layout before connect; the
// disconnect of both scopes is the original file with the host's writes,
// in its layout.
func TestDisconnectAfterHostRewrite(t *testing.T) {
	writes := [][2]string{claudeState[0], claudeState[2]} // the history edit is in the fixture's layout
	fixture := readFixture(t, "claude-user.json")
	backup := stringify(t, fixture)
	user, shop := Hosts["claude-code"], project(t, "/home/me/src/shop")
	current := stringify(t, edited(t, connected(t, shop, connected(t, user, backup)), writes))
	d, err := shop.Disconnect(backup, current)
	if err == nil {
		d, err = user.Disconnect(backup, d.Data)
	}
	if want := stringify(t, edited(t, fixture, writes)); err != nil || !bytes.Equal(d.Data, want) {
		t.Errorf("%v:\n%s", err, Diff("claude.json", want, d.Data))
	}
}

func stringify(t *testing.T, data []byte) []byte {
	t.Helper()
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestDisconnectGivesBackBytes: a file as connect left it disconnects to
// its bytes from before connect, for each host's file, and for
// ~/.claude.json with two scopes connected, in either order.
func TestDisconnectGivesBackBytes(t *testing.T) {
	for _, name := range Names() {
		h, data := fixture(t, name)
		d, err := h.Disconnect(data, connected(t, h, data))
		if err != nil || !bytes.Equal(d.Data, data) {
			t.Errorf("%s (%v):\n%s", name, err, Diff(name, data, d.Data))
		}
	}
	data := readFixture(t, "claude-user.json")
	user, shop := Hosts["claude-code"], project(t, "/home/me/src/shop")
	both := connected(t, shop, connected(t, user, data))
	for _, order := range [][2]Host{{user, shop}, {shop, user}} {
		d, err := order[0].Disconnect(data, both)
		if err == nil {
			d, err = order[1].Disconnect(data, d.Data)
		}
		if err != nil || !bytes.Equal(d.Data, data) {
			t.Errorf("%s first (%v):\n%s", order[0].Where(), err, Diff("claude.json", data, d.Data))
		}
	}
}

// TestDisconnectChangedEntry: an entry connect wrote and the user edited
// since, or removed, is named with its line, and nothing is put back;
// the other scope's disconnect is not held up by it.
func TestDisconnectChangedEntry(t *testing.T) {
	data := readFixture(t, "claude-user.json")
	user, shop := Hosts["claude-code"], project(t, "/home/me/src/shop")
	both := connected(t, shop, connected(t, user, data))
	editedArgs := edited(t, both, [][2]string{{"\"postgres\"\n          ]", "\"postgres\",\n            \"--log-level=debug\"\n          ]"}})
	removed := edited(t, both, [][2]string{{`"sentry": {`, `"sentry-off": {`}})
	for _, tc := range []struct {
		current []byte
		want    string
		line    int
	}{
		{editedArgs, `server "postgres" of projects["/home/me/src/shop"].mcpServers was changed since connect`, lineOf(editedArgs, `"postgres": {`)},
		{removed, `server "sentry" of projects["/home/me/src/shop"].mcpServers was removed since connect`, lineOf(removed, `"mcpServers": {`+"\n        \"postgres\"")},
	} {
		_, err := shop.Disconnect(data, tc.current)
		var ch *ChangedError
		if !errors.As(err, &ch) || err.Error() != tc.want || ch.Line != tc.line {
			t.Errorf("got %v (%+v), want %s at line %d", err, ch, tc.want, tc.line)
		}
		if d, err := user.Disconnect(data, tc.current); err != nil || !slices.Equal(d.Restored, []string{"memory"}) {
			t.Errorf("user scope: restored %q, %v", d.Restored, err)
		} else if !user.BackupNeeded(data, d.Data) {
			t.Error("the backup is not kept for the changed entry")
		}
	}
}

// TestDisconnectLeavesOthers: a server starting mcpx-fw serve that the
// backup has no entry for stays as it is; an entry
// the user rewired by hand is the user's change of connect's scope, an
// error, unless the scope holds no entry of connect's any more.
func TestDisconnectLeavesOthers(t *testing.T) {
	h := Hosts["cursor"]
	backup := []byte(`{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}`)
	late := `"late": {"command": "/opt/bin/mcpx-fw", "args": ["serve", "--config", "/home/me/mcpx-fw.yaml", "--server", "late"]}`
	current := connected(t, h, []byte(`{"mcpServers": {"late": {"command": "z"}, "a": {"command": "x"}, "b": {"command": "y"}}}`))
	d, err := h.Disconnect(backup, current)
	want := `{"mcpServers": {` + late + `, "a": {"command": "x"}, "b": {"command": "y"}}}`
	if err != nil || !slices.Equal(d.Unknown, []string{"late"}) || string(d.Data) != want {
		t.Errorf("unknown %q, %v:\n%s\nwant %s", d.Unknown, err, d.Data, want)
	}
	a := `"a": {"command": "/opt/bin/mcpx-fw", "args": ["serve", "--config", "/home/me/mcpx-fw.yaml", "--server", "a"]}`
	b := `"b": {"command": "/opt/bin/mcpx-fw", "args": ["serve", "--config", "/home/me/mcpx-fw.yaml", "--server", "b"]}`
	byHand := edited(t, connected(t, h, backup), [][2]string{{b, `"b": {"command": "y2"}`}})
	if _, err = h.Disconnect(backup, byHand); err == nil || err.Error() != `server "b" of mcpServers was changed since connect` {
		t.Errorf("b rewired: %v", err)
	}
	allByHand := edited(t, byHand, [][2]string{{a, `"a": {"command": "x2"}`}})
	if d, err = h.Disconnect(backup, allByHand); err != nil || d.Restored != nil || !bytes.Equal(d.Data, allByHand) {
		t.Errorf("restored %q, %v: %s", d.Restored, err, d.Data)
	}
}

// TestDisconnectMoved: entries the user moved since connect are put back
// where they are now.
func TestDisconnectMoved(t *testing.T) {
	h := Hosts["cursor"]
	backup := []byte(`{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}`)
	c := connected(t, h, backup)
	i := bytes.Index(c, []byte(`, "b"`))
	moved := slices.Concat([]byte(`{"mcpServers": {`), c[i+2:len(c)-2], []byte(", "), c[len(`{"mcpServers": {`):i], []byte("}}"))
	d, err := h.Disconnect(backup, moved)
	if want := `{"mcpServers": {"b": {"command": "y"}, "a": {"command": "x"}}}`; err != nil || string(d.Data) != want {
		t.Errorf("got %s, %v; want %s", d.Data, err, want)
	}
}

func connected(t *testing.T, h Host, data []byte) []byte {
	t.Helper()
	got, err := h.Connect(data, testServe)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// edited applies each edit, a text found exactly once and its
// replacement.
func edited(t *testing.T, data []byte, edits [][2]string) []byte {
	t.Helper()
	s := string(data)
	for _, e := range edits {
		if n := strings.Count(s, e[0]); n != 1 {
			t.Fatalf("%q found %d times", e[0], n)
		}
		s = strings.Replace(s, e[0], e[1], 1)
	}
	return []byte(s)
}

func lineOf(data []byte, text string) int {
	return lineAt(data, bytes.Index(data, []byte(text)))
}
