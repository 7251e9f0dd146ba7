package hostconfig

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Server is one server of a host's file, as the host would start it.
type Server struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Dir is the command's working folder ("cwd").
	Dir string
	// others are the entry's members that say nothing of how to start the
	// server (a description, disabled, a host's own setting): the
	// connected entry keeps them.
	others []member
	// Connected marks an entry that already starts mcpx-fw serve.
	Connected bool
}

// entry is a server's entry as the four hosts write it.
type entry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Cwd     string            `json:"cwd"`
}

// started are the members of an entry that say how to start the server:
// the connected entry says that itself. Any other member is kept.
var started = map[string]bool{"type": true, "command": true, "args": true, "env": true, "url": true, "headers": true, "cwd": true}

// Parse reads the servers of a host's file, in the file's order. A file
// with no servers member has none; a server mcpx-fw cannot start the way
// the host does (an SSE endpoint, an entry with neither command nor url) is
// an error naming it.
func (h Host) Parse(data []byte) ([]Server, error) {
	top, err := members(data)
	if err != nil {
		return nil, err
	}
	list, ok := find(top, h.Key)
	if !ok {
		return nil, nil
	}
	entries, err := members(list.Value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Key, err)
	}
	var out []Server
	for _, m := range entries {
		s, err := h.server(m)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", h.Key, m.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func (h Host) server(m member) (Server, error) {
	var e entry
	if err := json.Unmarshal(m.Value, &e); err != nil {
		return Server{}, err
	}
	s := Server{Name: m.Name, Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers, Dir: e.Cwd}
	all, err := members(m.Value)
	if err != nil {
		return Server{}, err
	}
	for _, o := range all {
		if o.Name == "envFile" {
			return Server{}, fmt.Errorf("envFile is not imported: write its variables in env")
		}
		if !started[o.Name] {
			s.others = append(s.others, o)
		}
	}
	switch {
	case e.Type == "sse":
		return Server{}, fmt.Errorf("an SSE server: mcpx-fw reaches streamable HTTP servers only (type http)")
	case e.Type != "" && e.Type != "stdio" && e.Type != "http":
		return Server{}, fmt.Errorf("type %q is not stdio or http", e.Type)
	case e.Command == "" && e.URL == "":
		return Server{}, fmt.Errorf("neither command nor url")
	case e.Command != "" && e.URL != "":
		return Server{}, fmt.Errorf("both command and url")
	}
	s.Connected = IsServe(e.Command, e.Args)
	return s, nil
}

// HostVars are the env members whose values the host fills in when it
// starts the server (${input:id}, ${env:NAME}, ${workspaceFolder}, a
// Claude Code ${VAR}): the connected entry keeps them in its own env, so
// the host still fills them in, and mcpx-fw's config passes each on by
// name.
func (s Server) HostVars() map[string]string {
	vars := map[string]string{}
	for name, v := range s.Env {
		if strings.Contains(v, "${") {
			vars[name] = v
		}
	}
	return vars
}

// IsServe tells whether a command line starts mcpx-fw serve: an entry
// connect wrote, or one a person wrote the same way.
func IsServe(command string, args []string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	return base == "mcpx-fw" && len(args) > 0 && args[0] == "serve"
}
