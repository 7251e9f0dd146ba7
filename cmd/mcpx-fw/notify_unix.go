//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd the leader of a process group of its own and its
// cancellation kill that whole group: a notification script that started
// a child (a sleep, a curl) is killed with it at its timeout.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
