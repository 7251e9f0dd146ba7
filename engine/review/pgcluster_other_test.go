//go:build !unix

package review

import "os/exec"

// pgRunner runs PostgreSQL's commands as this user.
func pgRunner(string) (runAs, error) {
	return func(cmd *exec.Cmd) error { return cmd.Run() }, nil
}
