//go:build linux

package relay

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU pid has used, from its process CPU clock
// (clock_gettime on MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)): every
// thread's, living or exited, in ns. /proc/PID/stat counts in clock ticks
// (10 ms), coarser than a round; /proc/PID/schedstat counts the main
// thread only.
func processCPU(pid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^pid<<3|2), &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}
