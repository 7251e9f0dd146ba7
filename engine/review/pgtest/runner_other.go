//go:build !unix

package pgtest

import "os/exec"

// runner runs PostgreSQL's commands as this user.
func runner(string) (runAs, error) {
	return func(cmd *exec.Cmd) error { return cmd.Run() }, nil
}

// clusterParent is the folder clusters are made in: the temporary folder.
func clusterParent() string { return "" }
