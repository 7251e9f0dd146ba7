//go:build unix

package relay

import "syscall"

// writeNow makes one write(2) of p without waiting for the pipe to have
// room, and returns how much of p it took (0 on any error).
func (w *childStdin) writeNow(p []byte) int {
	rc, err := w.stdin.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Write(func(fd uintptr) bool {
		m, err := syscall.Write(int(fd), p)
		if err == nil && m > 0 {
			n = m
		}
		return true // never wait for the pipe to drain
	})
	return n
}
