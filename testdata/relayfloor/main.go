// Command relayfloor is the least a stdio relay can do: it starts the
// command it is given and copies the host's input to the command's input
// and the command's output to the host's, byte for byte, reading nothing.
// The tools/call benchmark (relay's BenchmarkToolCallFloor) runs it in
// mcpx-fw serve's place, so the cost of two more pipe hops on the machine
// at hand is measured in the same run as the firewall's.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relayfloor COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		_ = in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "relayfloor:", err)
	os.Exit(1)
}
