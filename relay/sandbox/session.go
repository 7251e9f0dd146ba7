package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// SessionPaths are the places of the user's session through which a
// process can have commands run outside any sandbox, as the user: the
// runtime dir (the systemd user manager, `systemd-run --user`, and the
// D-Bus session bus live there, as do the Wayland display and most agent
// sockets), and the tmux and screen servers (send-keys into the operator's
// shell). They exist only where a desktop or a multiplexer runs; none is
// needed by an MCP server doing its job. X11's sockets and tmux's default
// folder are in /tmp, which an isolated command has its own of (see
// privateFolders): tmux's is listed for a TMUX_TMPDIR elsewhere. Outside
// Linux there are none to hide.
func SessionPaths() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	uid := os.Getuid()
	var out []string
	for _, dir := range []string{os.Getenv("XDG_RUNTIME_DIR"), fmt.Sprintf("/run/user/%d", uid)} {
		if privateDir(dir) {
			out = append(out, dir)
		}
	}
	if dir := os.Getenv("TMUX_TMPDIR"); dir != "" {
		out = append(out, filepath.Join(dir, fmt.Sprintf("tmux-%d", uid)))
	}
	return append(out, "/run/screen")
}

// privateDir reports whether dir is a runtime dir as the XDG spec has it:
// a folder only its owner may enter (0700). A variable pointing anywhere
// else (/tmp, say) is not hidden: the upstream needs that place.
func privateDir(dir string) bool {
	if dir == "" {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && fi.Mode().Perm() == 0o700
}
