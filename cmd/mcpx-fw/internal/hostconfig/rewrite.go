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
	d, err := h.read(data)
	if err != nil || len(d.servers) == 0 {
		return data, err
	}
	unit := indentUnit(data, d.top)
	out := slices.Clone(data)
	for i := len(d.entries) - 1; i >= 0; i-- { // from the end: earlier spans stay valid
		if d.servers[i].Connected {
			continue
		}
		m := d.entries[i]
		val, err := h.entryBytes(serve, d.servers[i], data[m.Start:m.End], indentBefore(data, m.Start), unit)
		if err != nil {
			return nil, err
		}
		out = slices.Concat(out[:m.Start], val, out[m.End:])
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
	if bytes.Contains(old, []byte("\r\n")) { // the file's line ends
		return bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte("\r\n")), nil
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
// the file's own, the list of server names, or a comment or spacing
// between them: what connect must leave as it was, whatever it rewrites
// (the tests and FuzzHostFile hold it to that).
func (h Host) ChangedSince(backup, current []byte) (string, error) {
	before, err := h.read(backup)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	now, err := h.read(current)
	if err != nil {
		return "", err
	}
	if !slices.EqualFunc(before.top, now.top, sameName) {
		return "its top-level members", nil
	}
	if !slices.EqualFunc(before.entries, now.entries, sameName) {
		return "the names under " + h.Where(), nil
	}
	for i, m := range before.top {
		if !bytes.Equal(before.outside(m.Start, m.End), now.outside(now.top[i].Start, now.top[i].End)) {
			return m.Name, nil
		}
	}
	if !bytes.Equal(before.outside(0, len(backup)), now.outside(0, len(current))) {
		return "the text between its members (a comment, spacing)", nil
	}
	return "", nil
}

func sameName(x, y member) bool { return x.Name == y.Name }

// outside is data[from:to] without the server entries in it: what
// connect leaves as it was.
func (d doc) outside(from, to int) []byte {
	var out []byte
	for _, e := range d.entries {
		if e.Start >= from && e.End <= to {
			out = append(append(out, d.data[from:e.Start]...), 0) // where an entry was
			from = e.End
		}
	}
	return append(out, d.data[from:to]...)
}
