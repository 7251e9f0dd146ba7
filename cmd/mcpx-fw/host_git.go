package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// warnUnignored prints one line when path, a file connect or import wrote
// that holds a key or token, lies in a git work tree and git does not
// ignore it: a commit would publish it. Without git on PATH, or outside a
// work tree, it says nothing.
func warnUnignored(w io.Writer, path string) {
	git, err := exec.LookPath("git")
	if err != nil {
		return
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return
	}
	// a work tree's own config may name a program for git to run
	// (core.fsmonitor): none is run for this question
	gitIn := func(a ...string) *exec.Cmd {
		return exec.Command(git, append([]string{"-c", "core.fsmonitor=false", "-C", dir}, a...)...)
	}
	top, err := gitIn("rev-parse", "--show-toplevel").Output()
	if err != nil {
		return
	}
	var exit *exec.ExitError
	err = gitIn("check-ignore", "-q", "--", filepath.Base(abs)).Run()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 { // 0: ignored; 128: git cannot tell
		return
	}
	root := strings.TrimSpace(string(top))
	rel, err := filepath.Rel(root, filepath.Join(dir, filepath.Base(abs)))
	if err != nil {
		return
	}
	fmt.Fprintf(w, "warning: %s holds keys or tokens and is in the git work tree %s, not ignored: add /%s to %s\n",
		path, root, filepath.ToSlash(rel), filepath.Join(root, ".gitignore"))
}

// configHoldsSecret tells whether mcpx-fw's config holds an env or header
// value written in it, not one filled in from serve's environment.
func configHoldsSecret(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return true // cannot tell: warn
	}
	for _, s := range configSecrets(&doc) {
		if !strings.Contains(s.Value, "${") {
			return true
		}
	}
	return false
}

// backupHoldsSecret tells whether the backup of the host's file holds an
// env or header value written in it (a host variable is none).
func (hf hostFile) backupHoldsSecret() bool {
	data, err := os.ReadFile(hostconfig.BackupPath(hf.path))
	if err != nil {
		return false
	}
	servers, err := hf.host.Parse(data)
	if err != nil {
		return true // cannot tell: warn
	}
	for _, s := range servers {
		for _, v := range s.Env {
			if !strings.Contains(v, "${") {
				return true
			}
		}
		for _, v := range s.Headers {
			if !strings.Contains(v, "${") {
				return true
			}
		}
	}
	return false
}
