package config

import (
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// The words of isolation.default and servers.<name>.isolation.
const (
	IsolationNamespaces = "namespaces" // user, mount, PID and IPC namespaces (Linux)
	IsolationNone       = "none"       // the command runs as serve does, seeing what serve sees
)

var isolationModes = []string{IsolationNamespaces, IsolationNone}

// defaultIsolation is isolation.default unless configured: namespaces where
// the build can isolate (Linux), none elsewhere, where there is nothing to
// isolate with.
func defaultIsolation() string {
	if sandbox.Supported {
		return IsolationNamespaces
	}
	return IsolationNone
}

// IsolationOf is a server's isolation word and the key that set it.
func (c *Config) IsolationOf(name string, s Server) (mode, key string) {
	if s.Isolation != "" {
		return s.Isolation, "servers." + name + ".isolation"
	}
	return c.Isolation.Default, "isolation.default"
}
