//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// privateMode: the edit folder's mode bits say who may enter it.
const privateMode = true

// ownedByMe reports whether fi is owned by this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
