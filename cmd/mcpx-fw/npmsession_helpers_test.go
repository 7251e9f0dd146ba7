package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// npmSession is a running testdata/npm/hostsession.mjs: a TypeScript SDK
// host that stays connected while the test acts on the firewall.
type npmSession struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan string // the notifications it heard, by method

	mu      sync.Mutex
	next    int
	waiting map[int]chan npmReply
	stderr  bytes.Buffer // the host's, and over stdio serve's
}

// npmReply is the host's answer to one request of the test.
type npmReply struct {
	ID     int             `json:"id"`
	Tools  []string        `json:"tools"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Event     string `json:"event"`
	Connected *bool  `json:"connected"`
}

// startNPMSession runs hostsession.mjs in mode ("stdio" with serve's
// command, "http" with serve's URL) and waits until it is connected.
func startNPMSession(t *testing.T, node, mode string, target ...string) *npmSession {
	t.Helper()
	args := append([]string{repoPath(t, "testdata/npm/hostsession.mjs"), mode}, target...)
	s := &npmSession{cmd: exec.Command(node, args...), events: make(chan string, 16), waiting: map[int]chan npmReply{}}
	s.cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	s.cmd.WaitDelay = 10 * time.Second
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.stdin.Close()
		_ = s.cmd.Wait()
	})
	connected := make(chan bool, 1)
	go s.read(out, connected)
	select {
	case ok := <-connected:
		if !ok {
			t.Fatalf("the TypeScript host did not connect:\n%s", s.output())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the TypeScript host did not connect within a minute:\n%s", s.output())
	}
	return s
}

// read hands each line the host prints to whoever waits for it.
func (s *npmSession) read(out io.Reader, connected chan<- bool) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r npmReply
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch {
		case r.Connected != nil:
			connected <- *r.Connected
		case r.Event != "":
			s.events <- r.Event
		default:
			s.mu.Lock()
			ch := s.waiting[r.ID]
			delete(s.waiting, r.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}
	close(connected)
}

// send starts one request and returns where its answer arrives.
func (s *npmSession) send(t *testing.T, req map[string]any) <-chan npmReply {
	t.Helper()
	ch := make(chan npmReply, 1)
	s.mu.Lock()
	s.next++
	req["id"] = s.next
	s.waiting[s.next] = ch
	s.mu.Unlock()
	if _, err := s.stdin.Write(append(mustJSON(t, req), '\n')); err != nil {
		t.Fatal(err)
	}
	return ch
}

// do makes one request and waits for its answer.
func (s *npmSession) do(t *testing.T, req map[string]any) npmReply {
	t.Helper()
	select {
	case r := <-s.send(t, req):
		return r
	case <-time.After(time.Minute):
		t.Fatalf("no answer to %v within a minute:\n%s", req, s.output())
	}
	return npmReply{}
}

func (s *npmSession) list(t *testing.T) []string { return s.do(t, map[string]any{"op": "list"}).Tools }

func (s *npmSession) call(t *testing.T, name string, args map[string]any) npmReply {
	return s.do(t, map[string]any{"op": "call", "name": name, "arguments": args})
}

// stderrLine waits for a line of the host's stderr that starts with
// prefix, and returns the rest of it.
func (s *npmSession) stderrLine(t *testing.T, prefix string) string {
	t.Helper()
	var rest string
	waitFor(t, "a line starting "+prefix, func() bool {
		for _, line := range strings.Split(s.output(), "\n") {
			if r, ok := strings.CutPrefix(line, prefix); ok {
				rest = r
				return true
			}
		}
		return false
	})
	return rest
}

func (s *npmSession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
