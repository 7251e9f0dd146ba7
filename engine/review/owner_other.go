//go:build !linux

package review

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// selfToken is just the pid: without /proc there is no portable start
// time, so pid reuse can keep an abandoned item pending until its deadline.
var selfToken = sync.OnceValue(func() string {
	return strconv.Itoa(os.Getpid())
})

// processAlive asks the OS whether the pid exists. Only a definite "no
// such process" counts as dead.
func processAlive(o owner) bool {
	p, err := os.FindProcess(o.pid)
	if err != nil {
		return false // Windows: no process with that id
	}
	err = p.Signal(syscall.Signal(0))
	return !errors.Is(err, os.ErrProcessDone)
}
