package hostconfig

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// hides: a file h reads, masked, has the same lines and reads as the
// same servers with every env and headers value Hidden.
func hides(t *testing.T, h Host, data []byte) {
	t.Helper()
	before, err := h.Parse(data)
	if err != nil {
		return
	}
	masked, err := h.mask(data)
	if err != nil {
		t.Fatalf("a file read is not masked: %v\n%q", err, data)
	}
	after, err := h.Parse(masked)
	if err != nil || len(after) != len(before) || bytes.Count(masked, []byte("\n")) != bytes.Count(data, []byte("\n")) {
		t.Fatalf("masked: %v\n%q\n%q", err, data, masked)
	}
	for _, s := range after {
		for _, v := range append(slices.Collect(maps.Values(s.Env)), slices.Collect(maps.Values(s.Headers))...) {
			if !strings.HasPrefix(v, "«hidden: ") {
				t.Fatalf("%s: %q shown in %q", s.Name, v, masked)
			}
		}
	}
}

// connects: a file h reads connects to one that reads back with every
// server through mcpx-fw, nothing outside the entries changed, a second
// connect changes nothing, and disconnect gives data's bytes back.
func connects(t *testing.T, h Host, data []byte) {
	t.Helper()
	hides(t, h, data)
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
