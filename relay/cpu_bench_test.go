package relay

// The CPU readings of the tools/call benchmarks (P1): what each process
// behind a path spends during that path's rounds, per call. The firewall's
// own cost is the figure a relay is screened by (serve's CPU per relayed
// call against the upstream's own), and wall-clock ratios on a shared
// machine hide it.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cpuGroup is one set of processes whose CPU a path's rounds are charged,
// reported as one metric.
type cpuGroup struct {
	metric string
	pids   []int
	used   time.Duration // from start to stop
}

// cpuMeter reads its groups at the start of a sub-benchmark's first round
// and at the end of its last. The processes of one path serve that path
// alone, so what they spend in that span is the cost of its calls: while
// the other path's round runs they only finish the work of their own
// (a stdio upstream spends up to a fifth of its CPU per call at
// concurrency 1 after its answer has reached the host, which readings
// around each round alone would miss); idle, serve spends under 0.2 ms a
// second and an upstream nothing. A nil meter, or one whose reading
// failed (no /proc, no process CPU clock, a process gone), reports
// nothing.
type cpuMeter struct {
	groups []*cpuGroup
	failed bool
}

// newCPUMeter meters the given groups, or returns nil when there is
// nothing to read (a process could not be found).
func newCPUMeter(groups ...*cpuGroup) *cpuMeter {
	if len(groups) == 0 {
		return nil
	}
	return &cpuMeter{groups: groups}
}

func (m *cpuMeter) start() { m.read(func(g *cpuGroup, now time.Duration) { g.used = -now }) }

func (m *cpuMeter) stop() { m.read(func(g *cpuGroup, now time.Duration) { g.used += now }) }

func (m *cpuMeter) read(record func(g *cpuGroup, now time.Duration)) {
	if m == nil || m.failed {
		return
	}
	for _, g := range m.groups {
		now, err := groupCPU(g.pids)
		if err != nil {
			m.failed = true
			return
		}
		record(g, now)
	}
}

// perCall is each group's CPU per call in µs, by metric name; nil when
// the meter read nothing.
func (m *cpuMeter) perCall(calls int) map[string]float64 {
	if m == nil || m.failed || calls == 0 {
		return nil
	}
	per := map[string]float64{}
	for _, g := range m.groups {
		per[g.metric] = float64(g.used.Nanoseconds()) / 1e3 / float64(calls)
	}
	return per
}

// groupCPU is the CPU the processes pids have used since they started.
func groupCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		d, err := processCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// serveGroups are the firewall path's groups: serve itself, and every
// process under it, which is the upstream (under the sandbox's launcher
// when the upstream runs isolated; the launcher only waits, so it adds
// nothing per call). nil when the processes cannot be found.
func serveGroups(tb testing.TB, serve int) []*cpuGroup {
	under, err := descendants(serve)
	if err != nil || len(under) == 0 {
		tb.Logf("no CPU figures for serve's upstream: %v (%d processes under serve %d)", err, len(under), serve)
		return nil
	}
	return []*cpuGroup{{metric: "serve-cpu-µs/call", pids: []int{serve}}, {metric: "fw-upstream-cpu-µs/call", pids: under}}
}

// directGroups is the direct path's group: the upstream the host started
// and anything under it.
func directGroups(tb testing.TB, upstream int) []*cpuGroup {
	under, err := descendants(upstream)
	if err != nil {
		tb.Logf("no CPU figures for the direct upstream: %v", err)
		return nil
	}
	return []*cpuGroup{{metric: "direct-upstream-cpu-µs/call", pids: append([]int{upstream}, under...)}}
}

// reportCPU records each path's CPU per call and serve's against the
// upstream's behind it (x-cpu, the figure the relay's target is stated
// in). It records nothing where a meter read nothing.
func reportCPU(b *testing.B, fw, direct *side) {
	f, d := fw.cpu.perCall(len(fw.took)), direct.cpu.perCall(len(direct.took))
	for _, per := range []map[string]float64{f, d} {
		for metric, v := range per {
			b.ReportMetric(v, metric)
		}
	}
	if up := f["fw-upstream-cpu-µs/call"]; up > 0 {
		b.ReportMetric(f["serve-cpu-µs/call"]/up, "x-cpu")
	}
}

// descendants lists every process under pid, read from the parent ids in
// /proc/*/stat.
func descendants(pid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	if len(stats) == 0 {
		return nil, fmt.Errorf("no processes in /proc")
	}
	children := map[int][]int{}
	for _, path := range stats {
		child, parent, ok := parentOf(path)
		if ok {
			children[parent] = append(children[parent], child)
		}
	}
	var under []int
	for next := []int{pid}; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p]...)
		under = append(under, children[p]...)
	}
	return under, nil
}

// parentOf reads a /proc/PID/stat file: the process's pid and its
// parent's. The command name, in parentheses, may hold spaces and
// parentheses of its own, so the fields are read after the last ')'.
func parentOf(path string) (pid, parent int, ok bool) {
	raw, err := os.ReadFile(path)
	if err != nil { // it exited meanwhile
		return 0, 0, false
	}
	s := string(raw)
	open, end := strings.IndexByte(s, ' '), strings.LastIndexByte(s, ')')
	if open < 0 || end < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[end+1:]) // state, ppid, ...
	if len(fields) < 2 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(s[:open])
	parent, err2 := strconv.Atoi(fields[1])
	return pid, parent, err1 == nil && err2 == nil
}
