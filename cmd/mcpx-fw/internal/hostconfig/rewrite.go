package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Serve is how a rewritten entry starts mcpx-fw: the binary and the
// absolute config path. Each server gets an entry of its own, serving that
// one server (--server), so the host lists the same servers with the same
// tool names as before: one serve with several upstreams would prefix
// every tool name with its server's.
type Serve struct {
	Binary string
	Config string
}

// Args is the command line of the entry that serves the server named.
func (s Serve) Args(server string) []string {
	return []string{"serve", "--config", s.Config, "--server", server}
}

// serveEntry is the entry connect writes, in the order hosts show it.
type serveEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// Connect returns the file with every server's entry replaced by one that
// starts it through mcpx-fw serve; entries that already do are left as
// they are, and so is every byte outside the entries replaced, so
// connecting a connected file gives it back unchanged.
func (h Host) Connect(data []byte, serve Serve) ([]byte, error) {
	servers, err := h.Parse(data)
	if err != nil || len(servers) == 0 {
		return data, err
	}
	top, _ := members(data)
	list, _ := find(top, h.Key)
	entries, _ := members(list.Value)
	unit := indentUnit(data, top)
	out := slices.Clone(data)
	for i := len(entries) - 1; i >= 0; i-- { // from the end: earlier spans stay valid
		if servers[i].Connected {
			continue
		}
		m := entries[i]
		start, end := list.Start+m.Start, list.Start+m.End
		val, err := h.entryBytes(serve, servers[i], m.Value, indentBefore(data, start), unit)
		if err != nil {
			return nil, err
		}
		out = slices.Concat(out[:start], val, out[end:])
	}
	return out, nil
}

// entryBytes writes the serve entry in the style of the one it replaces:
// on one line if that one was, else indented as the file is.
func (h Host) entryBytes(serve Serve, s Server, old []byte, prefix, unit string) ([]byte, error) {
	e := serveEntry{Command: serve.Binary, Args: serve.Args(s.Name), Env: s.HostVars()}
	if h.Typed {
		e.Type = "stdio"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("}"))
	for _, o := range s.others {
		var v bytes.Buffer
		if err := json.Compact(&v, o.Value); err != nil {
			return nil, err
		}
		name, _ := json.Marshal(o.Name)
		b = slices.Concat(b, []byte(","), name, []byte(":"), v.Bytes())
	}
	b = append(b, '}')
	if !bytes.ContainsRune(old, '\n') {
		return spaced(b), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, prefix, unit); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// spaced puts a space after each comma and colon of compact JSON outside
// strings, the way a one-line entry is usually written.
func spaced(b []byte) []byte {
	var out bytes.Buffer
	in, esc := false, false
	for _, c := range b {
		out.WriteByte(c)
		switch {
		case esc:
			esc = false
		case c == '\\' && in:
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.Bytes()
}

// indentUnit is one level of the file's indent: what starts the line of
// its first top-level member, or two spaces when the file has no lines.
func indentUnit(data []byte, top []member) string {
	if len(top) > 0 {
		if unit := indentBefore(data, top[0].Start); unit != "" {
			return unit
		}
	}
	return strings.Repeat(" ", 2)
}

// ChangedSince names what of current differs from the file connect
// started from (backup), outside the entries connect rewrites: a member of
// the file's own, or the list of server names. Restoring the backup would
// undo that change, so disconnect asks before it does.
func (h Host) ChangedSince(backup, current []byte) (string, error) {
	before, err := members(backup)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	now, err := members(current)
	if err != nil {
		return "", err
	}
	if len(before) != len(now) {
		return "its top-level members", nil
	}
	for i := range before {
		switch {
		case before[i].Name != now[i].Name:
			return "its top-level members", nil
		case before[i].Name == h.Key:
			if !sameNames(before[i].Value, now[i].Value) {
				return "the names under " + h.Key, nil
			}
		case !bytes.Equal(before[i].Value, now[i].Value):
			return before[i].Name, nil
		}
	}
	return "", nil
}

func sameNames(a, b []byte) bool {
	ma, _ := members(a)
	mb, _ := members(b)
	return slices.EqualFunc(ma, mb, func(x, y member) bool { return x.Name == y.Name })
}
