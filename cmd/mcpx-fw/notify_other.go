//go:build !unix

package main

import "os/exec"

// killGroup leaves cmd as it is: its cancellation kills the command only.
func killGroup(*exec.Cmd) {}
