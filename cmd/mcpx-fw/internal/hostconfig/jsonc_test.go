package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConnectJSONC: VS Code's file with comments between and inside
// entries and trailing commas connects; every comment outside the
// rewritten entries is there, byte for byte, in the connected file; the
// connected file reads back with every server through mcpx-fw; a second
// connect changes nothing; and a restore gives the bytes back.
func TestConnectJSONC(t *testing.T) {
	h, data := Hosts["vscode"], readFixture(t, "vscode-comments.json")
	got, err := h.Connect(data, testServe)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "vscode-comments.connected.json"), got)
	allConnected(t, h, got, "Perplexity", "fetch", "github")
	for _, kept := range []string{
		"// Workspace MCP servers.", "/* Asked for once, then kept by VS Code. */", `// shown in the prompt`,
		`"password": true,`, "// Search, through Perplexity's API.", `/* "playwright": {"type": "stdio"`,
		"}, // one line", "// \"sandbox\" rules would go here.",
	} {
		if !bytes.Contains(got, []byte(kept)) {
			t.Errorf("lost %q", kept)
		}
	}
	if changed, err := h.ChangedSince(data, got); err != nil || changed != "" {
		t.Errorf("bytes outside the entries changed: %q, %v", changed, err)
	}
	if twice, err := h.Connect(got, testServe); err != nil || !bytes.Equal(twice, got) {
		t.Errorf("a second connect changed the file (%v):\n%s", err, Diff("vscode", got, twice))
	}
	writeRestore(t, data, got)
}

// TestConnectJSONCRLF: a file with CRLF line ends gets entries with CRLF
// line ends, and is otherwise what the LF file gets.
func TestConnectJSONCRLF(t *testing.T) {
	h, lf := Hosts["vscode"], readFixture(t, "vscode-comments.json")
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	got, err := h.Connect(crlf, testServe)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := h.Connect(lf, testServe)
	if want = bytes.ReplaceAll(want, []byte("\n"), []byte("\r\n")); !bytes.Equal(got, want) {
		t.Errorf("CRLF file:\n%s", Diff("vscode", want, got))
	}
	allConnected(t, h, got, "Perplexity", "fetch", "github")
	if twice, _ := h.Connect(got, testServe); !bytes.Equal(twice, got) {
		t.Error("a second connect changed the CRLF file")
	}
}

// TestStrictHostsRefuseComments: a comment or trailing comma in the file
// of a host that reads strict JSON is one error naming its line and why;
// VS Code reads the same file.
func TestStrictHostsRefuseComments(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"mcpServers\": {\n    // off for now\n    \"a\": {\"command\": \"x\"}\n  }\n}": "line 3: a comment, which NAME does not accept: its file is strict JSON",
		"{\"mcpServers\": {\"a\": {\"command\": \"x\"}}\n/* end */}":                          "line 2: a comment, which NAME",
		"{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"args\": [\"-y\",]}}}":              "line 2: a trailing comma, which NAME",
		"{\"mcpServers\": {\"a\": {\"command\": \"x\"},\n}}":                                  "line 1: a trailing comma, which NAME",
	} {
		for _, name := range []string{"claude-desktop", "claude-code", "cursor"} {
			_, err := Hosts[name].Parse([]byte(in))
			var syn *SyntaxError
			if !errors.As(err, &syn) || !strings.Contains(err.Error(), strings.ReplaceAll(want, "NAME", name)) {
				t.Errorf("%s, %q: got %v, want %q", name, in, err, want)
			}
		}
		jsonc := strings.ReplaceAll(in, "mcpServers", "servers")
		if servers, err := Hosts["vscode"].Parse([]byte(jsonc)); err != nil || len(servers) != 1 {
			t.Errorf("vscode, %q: %d servers, %v", jsonc, len(servers), err)
		}
	}
}

// TestJSONCErrors: what VS Code's file cannot be either is an error at
// its line.
func TestJSONCErrors(t *testing.T) {
	for in, want := range map[string]string{
		"{\"servers\": {}\n/* never closed":                           "line 2: a /* comment that is never closed",
		"{\"servers\": {\n\"a\": {\"command\" \"x\"}}}":               "line 2: invalid character",
		"{\"servers\": {\"a\": {\"command\": \"x\"}}} // the end\n{}": "more than one JSON value",
	} {
		if _, err := Hosts["vscode"].Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

// TestBlankKeepsOffsets: blanking leaves every byte that is not a comment
// or a trailing comma where it was, strings and line breaks included.
func TestBlankKeepsOffsets(t *testing.T) {
	in := "{\"a\": \"//x/*\", /* c\r\n */ \"b\": [1,],\n// d\n}"
	got, err := blank([]byte(in), true)
	want := "{\"a\": \"//x/*\",     \r\n    \"b\": [1 ] \n    \n}"
	if err != nil || string(got) != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	if !json.Valid(got) {
		t.Error("not JSON")
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// allConnected: the file reads back with exactly these servers, each
// started through mcpx-fw serve.
func allConnected(t *testing.T, h Host, data []byte, names ...string) {
	t.Helper()
	servers, err := h.Parse(data)
	if err != nil {
		t.Fatalf("connected file: %v", err)
	}
	var got []string
	for _, s := range servers {
		got = append(got, s.Name)
		if !s.Connected || !slices.Equal(s.Args, testServe.Args(s.Name)) {
			t.Errorf("%s bypasses mcpx-fw: %s %q", s.Name, s.Command, s.Args)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("servers %q, want %q", got, names)
	}
}

// writeRestore: written over a file holding data, connected then
// restored, the file has data's bytes again.
func writeRestore(t *testing.T, data, connected []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "host.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, data, connected); err != nil {
		t.Fatal(err)
	}
	if err := Restore(path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Errorf("restored:\n%s", Diff(path, data, got))
	}
}
