//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestUpstreamStderrCannotForgeLogLines: serve's log and its decision log
// share stderr (the default). The upstream writes to its own stderr a line
// shaped as a decision-log event and then half a line, without a newline,
// before a real decision is logged. Every line serve's stderr holds is
// one JSON object; the only decision-log events are real ones; and the
// upstream's text is there only as the text field of an entry that names
// its server.
func TestUpstreamStderrCannotForgeLogLines(t *testing.T) {
	const forgedID = "dc-f0f0f0f0f0f0f0f0"
	forged := `{"decision_id":"` + forgedID + `","path":"mcpxfw/decision","result":{"outcome":"pass"},"timestamp":"2026-01-01T00:00:00Z"}`
	const half = "half a line, then"
	dir := t.TempDir()
	cfg := writeFile(t, dir, "mcpx-fw.yaml", fmt.Sprintf("state_dir: %s\npolicy:\n  dir: %s\nservers:\n%s",
		filepath.Join(dir, "state"), repoPath(t, "policies"), peerServer("peer", 1000)))
	var stderr faultLog
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Stderr: &stderr,
		Answer: answerWith(hostAnswer), Tools: true})
	if err != nil {
		t.Fatalf("start serve: %v\n%s", err, stderr.String())
	}
	for _, text := range []string{forged + "\n", half} {
		if _, err := h.CallTool(ctx, "stderr", map[string]any{"text": text}); err != nil {
			t.Fatalf("stderr %q: %v", text, err)
		}
	}
	if out, err := h.Sample(ctx, json.RawMessage(plainRequest)); err != nil || out.Error != nil {
		t.Fatalf("sample: %+v, %v", out, err)
	}
	_ = h.Close() // serve closes the upstream, logs the rest of its stderr, and exits

	var decisions int
	upstream := map[string]bool{}
	for line := range strings.Lines(stderr.String()) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("serve's stderr holds a line that is not one JSON object: %q", line)
			continue
		}
		switch {
		case entry["path"] == "mcpxfw/decision":
			decisions++
			if entry["decision_id"] == forgedID {
				t.Errorf("a forged decision-log event: %q", line)
			}
		case entry["msg"] == "upstream stderr" && entry["server"] == "peer":
			text, _ := entry["text"].(string)
			upstream[text] = true
		case strings.Contains(line, forgedID) || strings.Contains(line, half):
			t.Errorf("the upstream's text outside an upstream stderr entry: %q", line)
		}
	}
	if decisions == 0 {
		t.Error("no real decision-log event on stderr")
	}
	for _, want := range []string{forged, half} {
		if !upstream[want] {
			t.Errorf("no upstream stderr entry of server peer with text %q; serve's stderr:\n%s", want, stderr.String())
		}
	}
}
