package hostconfig

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
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
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	Cwd     string
}

// field is where the member named goes, and what it holds, when it says
// how to start the server: the connected entry says that itself. Names
// match as the hosts match them, case and all (encoding/json would also
// take "Command" for command, a member the host ignores). Any other
// member is kept.
func (e *entry) field(name string) (any, string) {
	switch name {
	case "type", "command", "url", "cwd":
		return map[string]*string{"type": &e.Type, "command": &e.Command, "url": &e.URL, "cwd": &e.Cwd}[name], "a string"
	case "args":
		return &e.Args, "a list of strings"
	case "env", "headers":
		return map[string]*map[string]string{"env": &e.Env, "headers": &e.Headers}[name], "an object of strings"
	}
	return nil, ""
}

// Parse reads the servers of a host's file, in the file's order. A file
// with no servers member has none; a server mcpx-fw cannot start the way
// the host does (an SSE endpoint, an entry with neither command nor url) is
// an error naming it.
func (h Host) Parse(data []byte) ([]Server, error) {
	d, err := h.read(data)
	return d.servers, err
}

// doc is a host's file read: its bytes, the same bytes with comments and
// trailing commas blanked (every span is the same in both), its top-level
// members, the entries of its servers' object and their servers.
type doc struct {
	data, clean []byte
	top         []member
	entries     []member
	servers     []Server
}

func (h Host) read(data []byte) (doc, error) {
	d := doc{data: data}
	var err error
	if d.clean, err = blank(data, h.JSONC); err != nil {
		return doc{}, h.strict(err)
	}
	if d.top, err = members(d.clean); err != nil {
		return doc{}, err
	}
	list, ok, err := h.list(d)
	if err != nil || !ok {
		return d, err
	}
	if d.entries, err = membersAt(d.clean, list.Start, list.End); err != nil {
		return doc{}, fmt.Errorf("%s: %w", h.Where(), err)
	}
	for _, m := range d.entries {
		s, err := h.server(d.clean, m)
		if err != nil {
			return doc{}, fmt.Errorf("%s.%s: %w", h.Where(), m.Name, err)
		}
		d.servers = append(d.servers, s)
	}
	return d, nil
}

// strict says, of a comment or trailing comma in a file the host reads as
// strict JSON, that the host would refuse it.
func (h Host) strict(err error) error {
	if syn, ok := err.(*SyntaxError); ok && !h.JSONC {
		return &SyntaxError{Line: syn.Line, Msg: syn.Msg + ", which " + h.Name + " does not accept: its file is strict JSON"}
	}
	return err
}

// list is the servers' object: the member at the end of the host's keys.
func (h Host) list(d doc) (member, bool, error) {
	ms := d.top
	keys := h.keys()
	for i, name := range keys {
		m, ok := find(ms, name)
		if !ok || i == len(keys)-1 {
			return m, ok, nil
		}
		var err error
		if ms, err = membersAt(d.clean, m.Start, m.End); err != nil {
			return member{}, false, fmt.Errorf("%s: %w", name, err)
		}
	}
	return member{}, false, nil
}

func (h Host) server(clean []byte, m member) (Server, error) {
	all, err := membersAt(clean, m.Start, m.End)
	if err != nil {
		return Server{}, err
	}
	var e entry
	var others []member
	for _, o := range all {
		to, kind := e.field(o.Name)
		switch {
		case o.Name == "envFile":
			return Server{}, fmt.Errorf("envFile is not imported: write its variables in env")
		case to == nil:
			others = append(others, o)
		case json.Unmarshal(o.Value, to) != nil:
			return Server{}, fmt.Errorf("%s is not %s", o.Name, kind)
		}
	}
	s := Server{Name: m.Name, Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers, Dir: e.Cwd, others: others}
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
// name. A header's ${input:id} becomes one too, named InputVar(id), so
// the host still asks its user for it and serve reads it from its
// environment; one whose name an env member of another value already
// takes is left out (import refuses that header).
func (s Server) HostVars() map[string]string {
	vars := map[string]string{}
	for name, v := range s.Env {
		if strings.Contains(v, "${") {
			vars[name] = v
		}
	}
	for _, v := range s.Headers {
		for _, ref := range hostInput.FindAllStringSubmatch(v, -1) {
			name := InputVar(ref[1])
			if _, taken := s.Env[name]; !taken {
				vars[name] = ref[0]
			}
		}
	}
	return vars
}

// hostInput is a value a host asks its user for as it starts a server
// (VS Code's and Cursor's ${input:id}).
var hostInput = regexp.MustCompile(`\$\{input:([^}]*)\}`)

// HeaderInputs is the header value with each ${input:id} the host fills
// in made ${VAR} of serve's environment, as HostVars names it; ok is
// false when one of them has no variable there.
func (s Server) HeaderInputs(value string, vars map[string]string) (string, bool) {
	ok := true
	out := hostInput.ReplaceAllStringFunc(value, func(ref string) string {
		name := InputVar(hostInput.FindStringSubmatch(ref)[1])
		if vars[name] != ref {
			ok = false
		}
		return "${" + name + "}"
	})
	return out, ok
}

// InputVar is the environment variable named after an input's id:
// notes-token is NOTES_TOKEN.
func InputVar(id string) string {
	v := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, id)
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		v = "INPUT_" + v
	}
	return v
}

// IsServe tells whether a command line starts mcpx-fw serve: an entry
// connect wrote, or one a person wrote the same way.
func IsServe(command string, args []string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	return base == "mcpx-fw" && len(args) > 0 && args[0] == "serve"
}
