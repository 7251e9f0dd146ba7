//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// clusterParent is the folder clusters are made in: the temporary folder,
// or as root /tmp, which the user PostgreSQL then runs as can reach (a
// TMPDIR inside root's home, as the end-to-end tests set, it cannot).
func clusterParent() string {
	if os.Geteuid() == 0 {
		return "/tmp"
	}
	return ""
}

// runner runs PostgreSQL's commands as this user, or as root as the
// postgres user (Debian's package makes one) or else nobody, owning dir.
func runner(dir string) (runAs, error) {
	plain := func(cmd *exec.Cmd) error { return cmd.Run() }
	if os.Geteuid() != 0 {
		return plain, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres or nobody user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return func(cmd *exec.Cmd) error {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Dir = dir
		return cmd.Run()
	}, nil
}
