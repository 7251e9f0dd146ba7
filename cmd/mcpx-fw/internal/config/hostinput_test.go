package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHostInputRefused: a header or env value holding a host's
// ${input:id} (copied from VS Code's or Cursor's file) is refused at its
// line with the line to write instead, a ${VAR} named after the input's
// id; text beside the reference other than an auth scheme word, which may
// be a secret, is never shown.
func TestHostInputRefused(t *testing.T) {
	const secret = "sk-CANARY-0123456789"
	_, err := loadHere(t, "servers:\n  notes:\n    url: https://notes.example/mcp\n    headers:\n"+
		"      Authorization: \"Bearer ${input:notes-token}\"\n      X-Key: \""+secret+"${input:key}\"\n"+
		"  local:\n    command: [cat]\n    env: {API_TOKEN: \"${input:api.token}\"}\n")
	if err == nil {
		t.Fatal("a config asking the host for values loaded")
	}
	want := []string{
		`mcpx-fw.yaml:5: servers.notes.headers.authorization: asks the host for a value (${input:notes-token}), which serve cannot: write headers: {Authorization: "Bearer ${NOTES_TOKEN}"} and set NOTES_TOKEN in serve's environment`,
		`mcpx-fw.yaml:6: servers.notes.headers.x-key: asks the host for a value (${input:key}), which serve cannot: write ${KEY} in place of ${input:key} and set KEY in serve's environment`,
		`mcpx-fw.yaml:9: servers.local.env.API_TOKEN: asks the host for a value (${input:api.token}), which serve cannot: write env: {API_TOKEN: "${API_TOKEN}"} and set API_TOKEN in serve's environment`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "CANARY") {
		t.Errorf("a value beside the reference was shown: %v", err)
	}
}
