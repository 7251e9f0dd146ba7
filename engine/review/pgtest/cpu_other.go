//go:build !linux

package pgtest

import (
	"errors"
	"time"
)

// CPU is the processor time the server has used so far; it is read from
// /proc, on Linux only.
func (c *Cluster) CPU() (time.Duration, error) {
	return 0, errors.New("pgtest: the server's CPU time is read from /proc, on Linux only")
}
