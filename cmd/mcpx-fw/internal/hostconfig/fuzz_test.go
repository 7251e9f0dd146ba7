package hostconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzHostFile: for any bytes, blanking keeps the length and every line
// break where it was and leaves strict JSON as it is; a file VS Code's
// reader, or Claude Code's for a project's scope, takes connects to one
// that reads back with every server through mcpx-fw, with nothing outside
// the entries changed, a second connect changes nothing, and disconnect
// gives the bytes back.
func FuzzHostFile(f *testing.F) {
	for _, name := range []string{"vscode-comments.json", "vscode.json", "claude-user.json", "cursor.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("{\"servers\": {\"a\": {\"command\": \"x\",},/*\r\n*/},}"))
	f.Add([]byte(`{"projects": {"/p": {"mcpServers": {"a": {"command": "x"}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		clean, err := blank(data, true)
		if err == nil && (len(clean) != len(data) || !sameBreaks(data, clean)) {
			t.Fatalf("blank moved bytes: %q became %q", data, clean)
		}
		if strict, err := blank(data, false); err == nil && !bytes.Equal(strict, data) {
			t.Fatalf("strict JSON changed: %q became %q", data, strict)
		}
		if json.Valid(data) && err != nil {
			t.Fatalf("valid JSON refused: %v", err)
		}
		connects(t, Hosts["vscode"], data)
		scope, _ := Hosts["claude-code"].Project("/p")
		connects(t, scope, data)
	})
}

// connects: a file h reads connects to one that reads back with every
// server through mcpx-fw, nothing outside the entries changed, a second
// connect changes nothing, and disconnect gives data's bytes back.
func connects(t *testing.T, h Host, data []byte) {
	t.Helper()
	got, err := h.Connect(data, testServe)
	if err != nil {
		return
	}
	servers, err := h.Parse(got)
	if err != nil {
		t.Fatalf("connected file does not read: %v\n%q", err, got)
	}
	for _, s := range servers {
		if !s.Connected {
			t.Fatalf("%s bypasses mcpx-fw in %q", s.Name, got)
		}
	}
	if changed, err := h.ChangedSince(data, got); err != nil || changed != "" {
		t.Fatalf("outside the entries: %q, %v\n%q\n%q", changed, err, data, got)
	}
	if twice, err := h.Connect(got, testServe); err != nil || !bytes.Equal(twice, got) {
		t.Fatalf("second connect: %v\n%q\n%q", err, got, twice)
	}
	if d, err := h.Disconnect(data, got); err != nil || !bytes.Equal(d.Data, data) {
		t.Fatalf("disconnect: %v\n%q\n%q", err, data, d.Data)
	}
}

func sameBreaks(a, b []byte) bool {
	for i := range a {
		if (a[i] == '\n') != (b[i] == '\n') {
			return false
		}
	}
	return true
}
