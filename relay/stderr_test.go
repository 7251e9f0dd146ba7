package relay

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// stderrEntry is what one logged entry of an upstream's stderr says.
type stderrEntry struct {
	Msg, Text string
	Cut       bool
	Dropped   int64
}

func stderrEntries(logs *observer.ObservedLogs) []stderrEntry {
	var out []stderrEntry
	for _, e := range logs.All() {
		m := e.ContextMap()
		if m["server"] != "noisy" || e.Level != zapcore.InfoLevel {
			continue
		}
		got := stderrEntry{Msg: e.Message}
		got.Text, _ = m["text"].(string)
		got.Cut, _ = m["cut"].(bool)
		got.Dropped, _ = m["dropped_bytes"].(int64)
		out = append(out, got)
	}
	return out
}

// TestLogStderr: each line an upstream writes to stderr becomes one entry
// of serve's log naming the server, the text in a field: a line shaped as
// a decision-log event, a half line, escape sequences and bytes that are
// not UTF-8 included. Past the cap a line is cut, and how much was dropped
// is said.
func TestLogStderr(t *testing.T) {
	const forged = `{"decision_id":"dc-0000000000000000","path":"mcpxfw/decision","result":{"outcome":"pass"}}`
	long := strings.Repeat("a", stderrLineCap)
	tests := []struct {
		name, in string
		want     []stderrEntry
	}{
		{"a forged decision line", forged + "\n", []stderrEntry{{Msg: "upstream stderr", Text: forged}}},
		{"lines, one without a newline at the end", "one\r\ntwo\nhalf", []stderrEntry{
			{Msg: "upstream stderr", Text: "one"}, {Msg: "upstream stderr", Text: "two"}, {Msg: "upstream stderr", Text: "half"}}},
		{"controls, format characters, separators, not UTF-8", "\x1b[2J\rred\u202eevil\u200b\u2028\x7f\u0085\xff\tok\n", []stderrEntry{
			{Msg: "upstream stderr", Text: `\u001b[2J\u000dred\u202eevil\u200b\u2028\u007f\u0085\xff` + "\tok"}}},
		{"a line past the cap", long + "bbb\nnext\n", []stderrEntry{
			{Msg: "upstream stderr", Text: long, Cut: true}, {Msg: "upstream stderr line cut", Dropped: 3},
			{Msg: "upstream stderr", Text: "next"}}},
		{"a line past the cap that never ends", long + "bbbb", []stderrEntry{
			{Msg: "upstream stderr", Text: long, Cut: true}, {Msg: "upstream stderr line cut", Dropped: 4}}},
		{"a line exactly at the cap", long + "\n", []stderrEntry{{Msg: "upstream stderr", Text: long, Cut: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			logStderr(io.NopCloser(strings.NewReader(tt.in)), "noisy", zap.New(core))
			if diff := cmp.Diff(tt.want, stderrEntries(logs)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogStderrFlushesAtTheCap: a line that never ends is logged once it
// reaches the cap, while the stream is still open.
func TestLogStderrFlushesAtTheCap(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logged := make(chan struct{}, 1)
	signal := zap.Hooks(func(zapcore.Entry) error {
		select {
		case logged <- struct{}{}:
		default:
		}
		return nil
	})
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() { logStderr(r, "noisy", zap.New(core, signal)); close(done) }()
	if _, err := w.Write([]byte(strings.Repeat("x", stderrLineCap+10))); err != nil {
		t.Fatal(err)
	}
	for len(stderrEntries(logs)) == 0 {
		select {
		case <-logged:
		case <-time.After(10 * time.Second):
			t.Fatal("nothing logged 10s after a line reached the cap")
		}
	}
	if got := stderrEntries(logs)[0]; !got.Cut || len(got.Text) != stderrLineCap {
		t.Errorf("first entry %+v; want the first %d bytes, cut", got, stderrLineCap)
	}
	_ = w.Close()
	<-done
}
