package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"
)

// lineHost is a host that reads a firewall served over stdio as the
// TypeScript SDK reads its server (ReadBuffer): one message per line,
// lines ended by '\n'. A line that is not one JSON message, or holds
// another line end ('\r', U+0085, U+2028, U+2029: other readers end lines
// there), is an error at once. It writes its frames itself.
type lineHost struct {
	conn  net.Conn
	lines *bufio.Reader
	next  int
}

// newLineHost serves p over an in-memory stdio stream until tb ends, and
// initializes it as a host of 2025-11-25 declaring nothing.
func newLineHost(tb testing.TB, p *Proxy) *lineHost {
	tb.Helper()
	hostEnd, serveEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeStdio(ctx, serveEnd, serveEnd) }()
	tb.Cleanup(func() {
		_ = hostEnd.Close()
		cancel()
		<-done
	})
	h := &lineHost{conn: hostEnd, lines: bufio.NewReaderSize(hostEnd, 64<<10)}
	init := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"line-host","version":"1"}}}`
	if _, extra, err := h.exchange(init, `"init"`); err != nil || len(extra) > 0 {
		tb.Fatalf("initialize: %v (and %q)", err, extra)
	}
	if err := h.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		tb.Fatal(err)
	}
	return h
}

func (h *lineHost) write(frame string) error {
	_, err := h.conn.Write([]byte(frame + "\n"))
	return err
}

// line reads the next line, which must be one JSON message.
func (h *lineHost) line() ([]byte, error) {
	_ = h.conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a host that got nothing fails, never hangs
	line, err := h.lines.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading a line: %w (after %q)", err, line)
	}
	line = line[:len(line)-1]
	if bytes.ContainsAny(line, "\r\u0085\u2028\u2029") || !json.Valid(line) {
		return nil, fmt.Errorf("a line that is not one JSON message: %q", line)
	}
	return line, nil
}

// exchange writes frame and reads lines until the answer to id, which it
// returns with the lines before it.
func (h *lineHost) exchange(frame, id string) (answer []byte, extra [][]byte, err error) {
	if err := h.write(frame); err != nil {
		return nil, nil, err
	}
	for {
		line, err := h.line()
		if err != nil {
			return nil, extra, err
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		_ = json.Unmarshal(line, &m)
		if m.Method == nil && string(m.ID) == id {
			return line, extra, nil
		}
		extra = append(extra, line)
	}
}

// call makes a tools/call of tool with the raw bytes as its raw_b64, and
// returns the one line that answers it. Anything else the host reads
// before the answer, or after it until a ping's answer (the firewall
// writes to the host in order), is an error: one frame, one line.
func (h *lineHost) call(tool string, raw []byte) ([]byte, error) {
	h.next++
	id := fmt.Sprintf(`"call-%d"`, h.next)
	args, _ := json.Marshal(map[string]string{"raw_b64": base64.StdEncoding.EncodeToString(raw)})
	answer, extra, err := h.exchange(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+string(args)+`}}`, id)
	if err == nil && len(extra) == 0 {
		_, extra, err = h.exchange(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`, `"ping"`)
	}
	switch {
	case err != nil:
		return nil, err
	case len(extra) > 0:
		return nil, fmt.Errorf("lines besides the answer %s: %q", answer, extra)
	}
	return answer, nil
}
