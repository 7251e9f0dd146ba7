package relay

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childStdin is the command's stdin as the connection's writer: writes
// are serialized, since frameScreen answers refused frames on it and the
// frame path writes host calls to it too, and Close ends the command the
// way the SDK's command transport does (close stdin, wait, SIGTERM, wait,
// SIGKILL).
type childStdin struct {
	mu        sync.Mutex
	cmd       *exec.Cmd
	stdin     *os.File // non-blocking, on the runtime's poller (os.Pipe)
	terminate time.Duration
}

// startChild starts ct's command with its stdin on a pipe of the
// firewall's own making, so that the frame path can write to it without
// waiting (tryWrite).
func startChild(ct *mcp.CommandTransport) (*childStdin, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ct.Command.Stdin = r
	err = ct.Command.Start()
	_ = r.Close() // the child has its own copy
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	c := &childStdin{cmd: ct.Command, stdin: w, terminate: ct.TerminateDuration}
	if c.terminate <= 0 {
		c.terminate = 5 * time.Second // the SDK's default
	}
	return c, nil
}

// Write writes one frame, a message and its '\n' (as the SDK's stdio
// connection, frameScreen and the frame path each write them), under the
// framing rule (framing.go): as one line of compact JSON, or not at all.
func (w *childStdin) Write(p []byte) (int, error) {
	line, err := oneLine(p)
	if err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.stdin.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// tryWrite writes the frame p only if that needs no waiting: nobody else
// is writing, and the pipe takes its first bytes at once. It reports
// whether p was taken; if not, nothing of it was written, and the caller
// relays its call the SDK's way, on a goroutine of its own that may wait.
// The frame path runs on the host's reading goroutine, which must never
// wait for an upstream: one that stops reading its stdin would stall the
// host's requests to every other server, and its answers to the
// firewall's own requests. A frame the pipe takes only in part is finished
// on a goroutine that holds the lock until it is written whole, so frames
// never interleave. The frame leaves under the framing rule, as Write's
// do; one the rule refuses is not taken.
func (w *childStdin) tryWrite(p []byte) bool {
	p, err := oneLine(p)
	if err != nil || !w.mu.TryLock() {
		return false
	}
	n := w.writeNow(p)
	switch {
	case n == len(p):
		w.mu.Unlock()
		return true
	case n == 0:
		w.mu.Unlock()
		return false
	}
	go func() {
		defer w.mu.Unlock()
		_, _ = w.stdin.Write(p[n:]) // a broken pipe ends the session, which answers the call
	}()
	return true
}

func (w *childStdin) Close() error {
	if err := w.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(w.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if w.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := w.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}
