package sandbox

import (
	"slices"
	"strings"
)

// passed are the names of the firewall's own environment an upstream's
// command receives. Everything else (serve's credentials, the ${VAR}
// values of other servers' headers and env, MCPXFW_* settings, session
// sockets) stays with serve. The list is what ordinary programs need to
// run as the user and reach the network:
//   - PATH, HOME, USER, LOGNAME: finding programs, a home for caches and
//     config (npx needs both), and who the user is;
//   - LANG, LC_* (prefix, below), TZ, TERM: how text, times and output are
//     formatted;
//   - TMPDIR: where temporary files go (per user on macOS); an isolated
//     command's is its own /tmp instead (IsolatedEnviron);
//   - the proxy variables, both cases as programs read either, and the
//     certificate locations a proxy that inspects TLS needs: without them
//     an upstream behind a corporate proxy cannot reach anything.
//
// Left out on purpose: DISPLAY, WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS,
// SSH_AUTH_SOCK and XDG_RUNTIME_DIR name services of the user's session
// that run commands outside any sandbox.
var passed = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TERM", "TMPDIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// passedPrefix is the one family passed by prefix: the locale categories.
const passedPrefix = "LC_"

// Environ is an upstream command's whole environment: the allow-listed
// entries of parent (the firewall's own, as os.Environ gives it) and then
// own (the server's configured env), which wins over parent. The result is
// sorted by name, one entry per name.
func Environ(parent []string, own map[string]string) []string {
	env := map[string]string{}
	for _, kv := range parent {
		name, value, ok := strings.Cut(kv, "=")
		if ok && allowed(name) {
			env[name] = value
		}
	}
	for name, value := range own {
		env[name] = value
	}
	out := make([]string, 0, len(env))
	for name, value := range env {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

func allowed(name string) bool {
	return slices.Contains(passed, name) || (strings.HasPrefix(name, passedPrefix) && len(name) > len(passedPrefix))
}

// PrivateTemp is an isolated command's TMPDIR: its own /tmp, which no
// other process sees (on Linux; see Command).
const PrivateTemp = "/tmp"

// IsolatedEnviron is Environ for a command started isolated (Command): its
// TMPDIR is its own /tmp (PrivateTemp), never the firewall's, which names a
// folder of the user's; a TMPDIR of the server's own env still wins.
func IsolatedEnviron(parent []string, own map[string]string) []string {
	return Environ(append(slices.Clone(parent), "TMPDIR="+PrivateTemp), own)
}
