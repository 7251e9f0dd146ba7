package review

import (
	"strconv"
	"strings"
)

// An owner token names the process waiting on an item: "<pid>:<start>",
// where start is the process's start time (Linux: field 22 of
// /proc/<pid>/stat), so a reused pid is not mistaken for the waiter. On
// Linux a third field, the pid namespace's inode, lets a process in another
// namespace (the CLI on the host, serve in a container) see that it cannot
// judge the pid rather than abandon a live review. Elsewhere the token is
// just "<pid>".
type owner struct {
	pid   int
	start string // "" when unknown
	ns    string // "" when unknown
}

func (o owner) String() string {
	s := strconv.Itoa(o.pid)
	if o.start == "" {
		return s
	}
	s += ":" + o.start
	if o.ns != "" {
		s += ":" + o.ns
	}
	return s
}

// parseOwner reads a token; ok is false for a shape it does not know.
func parseOwner(tok string) (o owner, ok bool) {
	parts := strings.Split(tok, ":")
	if len(parts) > 3 {
		return owner{}, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return owner{}, false
	}
	o.pid = pid
	if len(parts) > 1 {
		o.start = parts[1]
	}
	if len(parts) > 2 {
		o.ns = parts[2]
	}
	return o, true
}

// ownerAlive reports whether the process named by tok may still be
// waiting. It answers true whenever it cannot tell (a token it cannot
// parse, a process it may not inspect): a wrongly kept item still ends at
// its deadline, while a wrongly abandoned one loses a live request.
func ownerAlive(tok string) bool {
	o, ok := parseOwner(tok)
	if !ok {
		return true
	}
	return processAlive(o)
}
