//go:build !linux

package relay

import (
	"errors"
	"time"
)

// processCPU reads another process's CPU clock on Linux only; elsewhere
// the benchmarks report no CPU figures.
func processCPU(int) (time.Duration, error) {
	return 0, errors.New("no process CPU clock on this system")
}
