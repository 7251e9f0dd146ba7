//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// TestIsolatedUpstreamCannotWriteWhatTheOperatorRuns: a hostile stdio
// upstream, isolated as serve runs it by default, tries to have code run
// as the operator the next time they open a terminal or review with
// `review approve --edit`: it writes a line into their shell's start-up
// file, their editor's configuration (a file, and a file in its folder),
// and a program into a folder on serve's PATH, in the home and outside it;
// in place, by renaming a new file over each, and by moving the folder
// above aside. Every route is closed, and the files are as they were. In
// the same home, it edits a project file and makes a new one, as a
// filesystem server does. check names what is read-only and which entry
// points, missing, an upstream could still create; serve's log says the
// same. The test's home is a folder of its own (HOME), never the
// machine's.
func TestIsolatedUpstreamCannotWriteWhatTheOperatorRuns(t *testing.T) {
	if isolationUnavailable != nil {
		t.Skipf("this system cannot isolate: %v", isolationUnavailable)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	tools := filepath.Join(root, "tools", "bin")
	operators := map[string]string{".bashrc": "# the operator's bashrc", ".vimrc": "set number",
		".config/nvim/init.lua": "-- the operator's", ".local/bin/helper": "#!/bin/sh"}
	for name, content := range operators {
		writeFile(t, home, name, content)
	}
	writeFile(t, tools, "tool", "#!/bin/sh")
	notes := writeFile(t, home, "project/notes.md", "notes")
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute,
		fmt.Sprintf("  evil:\n    command: [%q]\n    env: {%s: \"1\"}\n", upstreamBinary, peer.HostileEnv))
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "MCPXFW_ISOLATION_DEFAULT=namespaces",
		"PATH="+strings.Join([]string{filepath.Join(home, ".local", "bin"), tools, os.Getenv("PATH")}, string(os.PathListSeparator)))

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h, err := peer.StartHost(ctx, peer.HostOptions{Command: []string{binary, "serve", "--config", cfg}, Env: env})
	if err != nil {
		t.Fatalf("start serve: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	attacked := []string{filepath.Join(home, ".bashrc"), filepath.Join(home, ".vimrc"), filepath.Join(home, ".config", "nvim"),
		filepath.Join(home, ".config", "nvim", "init.lua"), filepath.Join(home, ".local", "bin"), filepath.Join(home, ".local", "bin", "vi"), tools}
	for _, r := range plantRoutes(ctx, t, h, attacked) {
		if r.Opened {
			t.Errorf("route open: %s", r.Name)
		} else {
			t.Logf("closed: %s (%s)", strings.TrimPrefix(r.Name, root), errTail(r.Detail))
		}
	}
	for name, content := range operators {
		if b, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(b) != content {
			t.Errorf("%s holds %q (%v); want the operator's %q", name, b, err, content)
		}
	}
	for _, dir := range []string{filepath.Join(home, ".local", "bin"), tools, filepath.Join(home, ".config", "nvim")} {
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s holds %d entries; want the operator's one", dir, len(ents))
		}
	}
	checkOrdinaryWrites(ctx, t, h, notes, filepath.Join(home, "new-notes.md"))
	checkReadOnlyReported(t, cfg, env, tools)
}

// plantRoutes has the hostile upstream, serve's one server (its tools are
// not prefixed), try to write into paths.
func plantRoutes(ctx context.Context, t *testing.T, h *peer.Host, paths []string) []peer.Route {
	t.Helper()
	res, err := h.CallTool(ctx, "plant", map[string]any{"paths": paths})
	if err != nil {
		t.Fatalf("plant: %v", err)
	}
	var routes []peer.Route
	if err := json.Unmarshal([]byte(res.Text), &routes); err != nil || len(routes) != 3*len(paths) {
		t.Fatalf("plant's answer %q: %v", res.Text, err)
	}
	return routes
}

// checkOrdinaryWrites: the upstream writes a project file and a new file
// in the home, in place (and by its other routes: nothing stops them
// there), and the new file is in the user's home.
func checkOrdinaryWrites(ctx context.Context, t *testing.T, h *peer.Host, project, fresh string) {
	t.Helper()
	for _, r := range plantRoutes(ctx, t, h, []string{project, fresh}) {
		if strings.HasPrefix(r.Name, "in place ") && !r.Opened {
			t.Errorf("%s: %s; want the write to land", r.Name, r.Detail)
		}
	}
	if b, err := os.ReadFile(fresh); err != nil || !strings.Contains(string(b), "planted by the upstream") {
		t.Errorf("%s holds %q (%v); want the upstream's line", fresh, b, err)
	}
}

// checkReadOnlyReported: check names the read-only paths (in the home as
// ~/...) and the entry points an upstream could still create; serve's log
// has the read-only paths.
func checkReadOnlyReported(t *testing.T, cfg string, env []string, tools string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, "check", "--config", cfg)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check: %v: %s", err, stderrText(err))
	}
	for _, want := range []string{"\nread-only for isolated upstreams: ", "~/.bashrc, ", "~/.vimrc, ", "~/.local/bin, ", "~/.config/nvim, ", tools + ", ",
		"\nisolated upstreams can still write (entry points that do not exist, which an upstream could create): ~/.profile, ~/.bash_profile, "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check's output has no %q:\n%s", want, out)
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
	want := `"msg":"isolated upstreams can read but not change these paths","paths":[`
	if !strings.Contains(string(log), want) || !strings.Contains(string(log), tools) {
		t.Errorf("serve's log has no %s with %s:\n%s", want, tools, log)
	}
}

// errTail is an error's message without the paths before it.
func errTail(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func stderrText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
