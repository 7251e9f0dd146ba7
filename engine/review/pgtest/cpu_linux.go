package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// every Linux ABI).
const userHZ = 100

// CPU is the processor time the server has used so far: the postmaster's
// own and that of every backend it has started, finished ones (reaped by
// the postmaster) and running ones alike. A benchmark takes it before and
// after, to count the database's work beside its own.
func (c *Cluster) CPU() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(first)))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %w", err)
	}
	own, err := procTicks(pid, true)
	if err != nil {
		return 0, err
	}
	ticks := own.cpu
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		child, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || child == pid {
			continue
		}
		if t, err := procTicks(child, false); err == nil && t.ppid == pid {
			ticks += t.cpu
		}
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// procStat is what CPU reads of one process.
type procStat struct {
	ppid int
	cpu  int64 // utime+stime, with its waited-for children's when asked
}

// procTicks reads /proc/PID/stat: after the command's closing parenthesis,
// field 4 is the parent, 14-17 utime, stime, cutime, cstime.
func procTicks(pid int, children bool) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 15 {
		return procStat{}, errors.New("short /proc stat")
	}
	var s procStat
	s.ppid, _ = strconv.Atoi(f[1])
	last := 12 // stime, field 15
	if children {
		last = 14 // cstime, field 17
	}
	for _, v := range f[11 : last+1] {
		n, _ := strconv.ParseInt(v, 10, 64)
		s.cpu += n
	}
	return s, nil
}
