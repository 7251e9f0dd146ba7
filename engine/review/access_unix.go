//go:build unix

package review

import "syscall"

// accessRW asks the kernel whether this process may read and write path,
// without opening it: closing any descriptor of the queue file would drop
// the POSIX locks SQLite holds on it in this process.
func accessRW(path string) error {
	const rOK, wOK = 0x4, 0x2
	return syscall.Access(path, rOK|wOK)
}
