package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
)

// TestReplayHelpNamesEveryJSONKey: policy replay --help names every key
// its --json prints, nested ones included.
func TestReplayHelpNamesEveryJSONKey(t *testing.T) {
	var r render.Replay
	r.AddReplayed("peer", "sampling", "request", "escalate", "pass", "dc-1", []string{"code"})
	r.AddReplayed("peer", "sampling", "request", "pass", "pass", "dc-2", nil)
	r.AddNotKept(render.CauseNotKept, "dc-3")
	r.Sort()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	help := policyReplayCommand().Long
	for _, k := range jsonKeys(doc) {
		if !strings.Contains(help, `"`+k+`"`) {
			t.Errorf("policy replay --help does not name the --json key %q", k)
		}
	}
}

// jsonKeys are the member names of v and of every object inside it.
func jsonKeys(v any) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			keys = append(append(keys, k), jsonKeys(m)...)
		}
	case []any:
		for _, e := range v {
			keys = append(keys, jsonKeys(e)...)
		}
	}
	return keys
}
