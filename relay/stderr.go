package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// stderrLineCap is the most of one stderr line an upstream gets logged; it
// is also all the memory its stderr takes.
const stderrLineCap = 4 << 10

// stderrTransport starts a command upstream (through Transport, which
// starts cmd) with its stderr on a pipe of its own, never on serve's: there
// the upstream could write a line that reads as a decision, or half a line
// that spoils the next real one. What it writes is logged by serve's
// logger instead, a line per entry (see logStderr).
type stderrTransport struct {
	mcp.Transport
	cmd    *exec.Cmd
	server string
	log    *zap.Logger
}

// stderrDrain bounds how long closing the connection waits for the last of
// the upstream's stderr to be logged: a process it left behind may hold
// the pipe open.
const stderrDrain = 2 * time.Second

func (t *stderrTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.cmd.Stderr = w
	conn, err := t.Transport.Connect(ctx)
	_ = w.Close() // the process has its own copy, or never will
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		logStderr(r, t.server, t.log)
	}()
	return &stderrConn{Connection: conn, logged: logged}, nil
}

// stderrConn is a command upstream's connection whose Close returns once
// what the upstream wrote to stderr until it exited is logged.
type stderrConn struct {
	mcp.Connection
	logged <-chan struct{}
}

func (c *stderrConn) Close() error {
	err := c.Connection.Close()
	select {
	case <-c.logged:
	case <-time.After(stderrDrain):
	}
	return err
}

// logStderr logs each line read from r, until it ends, as an info entry
// "upstream stderr" naming the server, the text in a field, made inert
// (see inert). A line longer than stderrLineCap is logged at the cap,
// without waiting for its end, and the rest of it is dropped; how many
// bytes were is logged when it ends (or the stream does). A last line
// without a newline is logged when the stream ends.
func logStderr(r io.ReadCloser, server string, log *zap.Logger) {
	defer r.Close()
	br := bufio.NewReaderSize(r, stderrLineCap)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			logStderrLine(log, server, line, errors.Is(err, bufio.ErrBufferFull))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			dropped, ended := dropRest(br)
			if dropped > 0 {
				log.Info("upstream stderr line cut", zap.String("server", server), zap.Int64("dropped_bytes", dropped))
			}
			if !ended {
				return
			}
			continue
		}
		if err != nil {
			return
		}
	}
}

func logStderrLine(log *zap.Logger, server string, line []byte, cut bool) {
	fields := []zap.Field{zap.String("server", server), zap.String("text", inert(trimEOL(line)))}
	if cut {
		fields = append(fields, zap.Bool("cut", true))
	}
	log.Info("upstream stderr", fields...)
}

// dropRest reads the rest of a line that passed the cap, up to its newline
// (which ended reports) or the end of the stream, and counts it.
func dropRest(br *bufio.Reader) (dropped int64, ended bool) {
	for {
		chunk, err := br.ReadSlice('\n')
		dropped += int64(len(trimEOL(chunk)))
		switch {
		case err == nil:
			return dropped, true
		case !errors.Is(err, bufio.ErrBufferFull):
			return dropped, false
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// inert is upstream text made safe for a log and whoever reads it in a
// terminal: control characters (C0, DEL, C1: escape sequences), invisible
// format characters (bidi overrides, zero-width), line and paragraph
// separators become \uXXXX, and bytes that are not UTF-8 \xNN. Tabs stay.
func inert(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, "\\x%02x", b[0])
		case r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)):
			fmt.Fprintf(&sb, "\\u%04x", r)
		default:
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}
