package hostconfig

import (
	"bytes"
	"slices"
)

// BackupNeeded tells whether data, a file with a scope disconnected,
// still holds an entry its backup gives back: another scope's connected
// entries (Claude Code's user scope and a project's, in one
// ~/.claude.json), or one the user changed since, which only the whole
// backup (--force) restores. The backup is kept while it is; a file that
// cannot be read keeps it too.
func (h Host) BackupNeeded(backup, data []byte) bool {
	without, err := h.Unconnected(backup, data)
	return err != nil || !bytes.Equal(without, data)
}

// Unconnected is data with the entries connect wrote, in every scope of
// the file, put back from backup: the file as it would be had mcpx-fw not
// been connected, with everything else written since. A connect with a
// backup already there keeps this in it, so the backup holds the bytes of
// every entry connect replaced, the ones it replaces now included, and
// not older ones the host has changed since.
func (h Host) Unconnected(backup, data []byte) ([]byte, error) {
	scopes, err := h.connectedScopes(data)
	if err != nil {
		return nil, err
	}
	for _, s := range scopes {
		d, err := s.Disconnect(backup, data)
		if err != nil {
			return nil, err
		}
		data = d.Data
	}
	return data, nil
}

// connectedScopes are the scopes of data holding an entry that starts
// mcpx-fw serve: the host's top-level servers and, in Claude Code's file,
// each project's local scope. The projects are read in one pass, so a
// large ~/.claude.json costs its size once, not once per project.
func (h Host) connectedScopes(data []byte) ([]Host, error) {
	top := h
	top.path = nil
	d, err := top.read(data)
	if err != nil {
		return nil, err
	}
	var out []Host
	if slices.ContainsFunc(d.servers, func(s Server) bool { return s.Connected }) {
		out = append(out, top)
	}
	projects, ok := find(d.top, "projects")
	if h.Name != "claude-code" || !ok {
		return out, nil
	}
	ps, err := membersAt(d.clean, projects.Start, projects.End)
	if err != nil {
		return out, nil // not an object: no project scopes
	}
	for _, p := range ps {
		if scope, err := top.Project(p.Name); err == nil && top.servesIn(d.clean, p) {
			out = append(out, scope)
		}
	}
	return out, nil
}

// servesIn tells whether the project p holds a server that starts mcpx-fw
// serve.
func (h Host) servesIn(clean []byte, p member) bool {
	pm, err := membersAt(clean, p.Start, p.End)
	if err != nil {
		return false
	}
	list, ok := find(pm, h.Key)
	if !ok {
		return false
	}
	entries, err := membersAt(clean, list.Start, list.End)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e member) bool {
		s, err := h.server(clean, e)
		return err == nil && s.Connected
	})
}
