package review

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// selfToken is "<pid>:<start>:<pidns>" for this process, or less when
// /proc does not say.
var selfToken = sync.OnceValue(func() string {
	pid := os.Getpid()
	start, err := procStart(pid)
	if err != nil {
		return strconv.Itoa(pid)
	}
	return owner{pid: pid, start: start, ns: pidNamespace()}.String()
})

// processAlive checks /proc for the pid and compares its start time.
func processAlive(o owner) bool {
	if o.ns != "" && o.ns != pidNamespace() {
		return true // another pid namespace: its pids mean nothing here
	}
	start, err := procStart(o.pid)
	if errors.Is(err, fs.ErrNotExist) {
		return signalAlive(o.pid)
	}
	if err != nil {
		return true
	}
	return o.start == "" || start == o.start
}

// signalAlive asks the kernel with signal 0. /proc hides other users'
// processes when mounted with hidepid, but kill still tells "no such
// process" (ESRCH) from "not yours" (EPERM).
func signalAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}

// procStart returns field 22 of /proc/<pid>/stat, the start time in clock
// ticks since boot. Field 2 (the command) may hold spaces and parentheses,
// so fields are counted from the last ')'.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	return statStart(string(b))
}

func statStart(s string) (string, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return "", errors.New("malformed /proc stat")
	}
	return f[19], nil
}

// pidNamespace returns the inode of this process's pid namespace, "" if
// unknown.
var pidNamespace = sync.OnceValue(func() string {
	link, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	link = strings.TrimPrefix(link, "pid:[")
	return strings.TrimSuffix(link, "]")
})
