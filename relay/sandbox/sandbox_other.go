//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// Supported reports whether this build can isolate at all: only on Linux.
const Supported = false

// errUnsupported is every isolation request outside Linux.
var errUnsupported = errors.New("isolation needs Linux (user and mount namespaces)")

// Command cannot isolate here: starting what it returns fails.
func Command(s Spec) *exec.Cmd {
	cmd := exec.Command(s.Args[0], s.Args[1:]...)
	cmd.Err = errUnsupported
	return cmd
}

// Probe reports that this system cannot isolate.
func Probe(_, _ []string) error { return errUnsupported }

// Writable is false: nothing is isolated here, so nothing is kept
// read-only.
func Writable(string) bool { return false }

// Undumpable does nothing outside Linux.
func Undumpable() error { return nil }

func runLauncher(launch) int { fail(exitSetup, errUnsupported); return exitSetup }

func verify(_, _ []string) int { return 1 }
