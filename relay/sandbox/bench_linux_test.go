package sandbox_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// BenchmarkStart is the cost of starting a command and seeing it exit,
// directly and through the launcher (namespaces, mounts for a few hidden
// paths, a fresh /proc, the nested namespaces), without and with the
// user's entry points read-only (this machine's: OperatorPaths, from HOME
// and PATH). The command is this test binary, exiting at once.
func BenchmarkStart(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := []string{roleEnv + "=exit", argsEnv + "=0"}
	dir := b.TempDir()
	hide := []string{dir, exe + ".missing", "/tmp/.X11-unix"}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(exe)
			cmd.Env = env
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	readOnly, _ := sandbox.OperatorPaths(nil)
	b.Logf("%d read-only paths", len(readOnly))
	for _, tt := range []struct {
		name     string
		readOnly []string
	}{{"isolated", nil}, {"isolated+read-only", readOnly}} {
		b.Run(tt.name, func(b *testing.B) {
			if err := sandbox.Probe(nil, nil); err != nil {
				b.Skipf("this system cannot isolate: %v", err)
			}
			for b.Loop() {
				if err := sandbox.Command(sandbox.Spec{Args: []string{exe}, Env: env, Hide: hide, ReadOnly: tt.readOnly}).Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
