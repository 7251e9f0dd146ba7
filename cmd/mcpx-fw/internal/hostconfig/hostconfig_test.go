package hostconfig

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var testServe = Serve{Binary: "/opt/bin/mcpx-fw", Config: "/home/me/mcpx-fw.yaml"}

// TestConnectGolden: each host's real-format file, connected, against its
// golden file; the result parses, every server starts mcpx-fw serve, and
// every other member is byte for byte the fixture's.
func TestConnectGolden(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			h, data := fixture(t, name)
			got, err := h.Connect(data, testServe)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".connected.json"), got)
			servers, err := h.Parse(got)
			if err != nil || len(servers) == 0 {
				t.Fatalf("connected file: %d servers, %v", len(servers), err)
			}
			for _, s := range servers {
				if !s.Connected || !slices.Equal(s.Args, testServe.Args(s.Name)) {
					t.Errorf("%s bypasses mcpx-fw: %s %q", s.Name, s.Command, s.Args)
				}
			}
			sameOthers(t, h, data, got)
		})
	}
}

// TestConnectIdempotent: connecting a connected file changes nothing.
func TestConnectIdempotent(t *testing.T) {
	for _, name := range Names() {
		h, data := fixture(t, name)
		once, _ := h.Connect(data, testServe)
		twice, err := h.Connect(once, testServe)
		if err != nil || !bytes.Equal(once, twice) {
			t.Errorf("%s: a second connect changed the file (%v):\n%s", name, err, Diff(name, once, twice))
		}
	}
}

// TestParse: the servers of each fixture, in the file's order, with what
// import needs of each.
func TestParse(t *testing.T) {
	h, data := fixture(t, "cursor")
	servers, err := h.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"playwright", "context7", "minecraft"}) {
		t.Fatalf("order %q", names)
	}
	if servers[1].URL != "https://mcp.context7.com/mcp" || servers[2].Env["WORLDAPI_TOKEN"] != "your-token" {
		t.Errorf("parsed %+v", servers)
	}
	h, data = fixture(t, "vscode")
	servers, _ = h.Parse(data)
	if v := servers[0].HostVars(); v["PERPLEXITY_API_KEY"] != "${input:perplexity-key}" || len(v) != 1 {
		t.Errorf("host vars %q", v)
	}
}

// TestConnectKeepsOthers: an entry's members that do not say how to start
// the server stay in the connected entry, after what connect writes.
func TestConnectKeepsOthers(t *testing.T) {
	h := Hosts["claude-code"]
	in := `{"mcpServers": {"a": {"command": "x", "description": "<b> & co", "cwd": "/srv", "disabled": false}}}`
	got, err := h.Connect([]byte(in), testServe)
	want := `{"mcpServers": {"a": {"type": "stdio", "command": "/opt/bin/mcpx-fw", "args": ["serve", "--config", "/home/me/mcpx-fw.yaml", "--server", "a"], "description": "<b> & co", "disabled": false}}}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
	servers, _ := h.Parse([]byte(in))
	if servers[0].Dir != "/srv" {
		t.Errorf("dir %q", servers[0].Dir)
	}
}

// TestParseRefuses: what mcpx-fw cannot serve the way the host did is
// named, never dropped.
func TestParseRefuses(t *testing.T) {
	h := Hosts["claude-code"]
	for in, want := range map[string]string{
		`{"mcpServers": {"a": {"type": "sse", "url": "https://x/sse"}}}`:  "mcpServers.a: an SSE server",
		`{"mcpServers": {"a": {}}}`:                                       "mcpServers.a: neither command nor url",
		`{"mcpServers": {"a": {"command": "x", "url": "https://x/mcp"}}}`: "mcpServers.a: both command and url",
		`[1]`:         "not a JSON object",
		`{"a": 1} {}`: "more than one JSON value",
		`{"a": 1`:     "EOF",
	} {
		if _, err := h.Parse([]byte(in)); err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// TestWriteRestore: for each host's file, connect then restore gives the
// original bytes and mode back; a second write keeps the first backup.
func TestWriteRestore(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			h, data := fixture(t, name)
			path := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			connected, _ := h.Connect(data, testServe)
			if err := Write(path, data, connected); err != nil {
				t.Fatal(err)
			}
			if err := Write(path, connected, connected); err != nil {
				t.Fatal(err)
			}
			if bak, _ := os.ReadFile(BackupPath(path)); !bytes.Equal(bak, data) {
				t.Fatal("the backup is not the original")
			}
			if err := Restore(path); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			info, _ := os.Stat(path)
			if !bytes.Equal(got, data) || info.Mode().Perm() != 0o640 {
				t.Errorf("restored %v, mode %v", bytes.Equal(got, data), info.Mode().Perm())
			}
			if _, err := os.Stat(BackupPath(path)); !os.IsNotExist(err) {
				t.Errorf("backup left: %v", err)
			}
			if err := Restore(path); err == nil {
				t.Error("a restore with no backup succeeded")
			}
		})
	}
}

// TestDefaultPaths: each host's usual file on each system.
func TestDefaultPaths(t *testing.T) {
	for _, tc := range []struct{ goos, want string }{
		{"darwin", "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"linux", "/h/.config/Claude/claude_desktop_config.json"},
		{"windows", "/ad/Claude/claude_desktop_config.json"},
	} {
		if got := filepath.ToSlash(claudeDesktop(tc.goos, "/h", "/ad")); got != tc.want {
			t.Errorf("%s: %s", tc.goos, got)
		}
	}
	if got := filepath.ToSlash(Hosts["cursor"].where("linux", "/h", "")); got != "/h/.cursor/mcp.json" {
		t.Errorf("cursor: %s", got)
	}
}

func fixture(t *testing.T, name string) (Host, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return Hosts[name], data
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (go test -update):\n%s", path, Diff(path, want, got))
	}
}

// sameOthers: every top-level member but the servers' is the same bytes,
// in the same order, and the server names keep their order.
func sameOthers(t *testing.T, h Host, before, after []byte) {
	t.Helper()
	a, _ := members(before)
	b, _ := members(after)
	if len(a) != len(b) {
		t.Fatalf("%d members became %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || (a[i].Name != h.Key && !bytes.Equal(a[i].Value, b[i].Value)) {
			t.Errorf("member %d: %s changed", i, a[i].Name)
		}
	}
	if !json.Valid(after) {
		t.Error("not valid JSON")
	}
}

// TestChangedSince: what the host changed after connect, outside the
// rewritten entries, is named; the rewritten entries alone are not.
func TestChangedSince(t *testing.T) {
	h, data := fixture(t, "claude-desktop")
	connected, _ := h.Connect(data, testServe)
	for _, tc := range []struct{ current, want string }{
		{string(connected), ""},
		{strings.Replace(string(connected), `"menuBarEnabled": true`, `"menuBarEnabled": false`, 1), "preferences"},
		{strings.Replace(string(connected), `"github": {`, `"gitlab": {`, 1), "the names under mcpServers"},
		{`{"mcpServers": {}}`, "its top-level members"},
	} {
		if got, err := h.ChangedSince(data, []byte(tc.current)); err != nil || got != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
	}
}

// TestTrailingText: text after the file's object that is not JSON is an
// error, as the hosts' readers make it, not a file read up to the object.
func TestTrailingText(t *testing.T) {
	for _, data := range []string{"{}A", `{"mcpServers": {"a": {"command": "x"}}} garbage`, "{}\n}"} {
		if _, err := Hosts["cursor"].Parse([]byte(data)); err == nil {
			t.Errorf("%q read", data)
		}
	}
	if _, err := Hosts["cursor"].Parse([]byte("{}\n  \n")); err != nil {
		t.Errorf("spaces after the object: %v", err)
	}
}
