package hostconfig

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// Disconnected is one scope of a host's file disconnected: the file with
// the entries connect wrote there put back, and what of the scope was not.
type Disconnected struct {
	Data []byte
	// Restored names the servers whose entries were put back.
	Restored []string
	// Unknown names the servers of the scope that start mcpx-fw serve and
	// that the backup does not hold (written by hand, or connected when the
	// backup could not be brought up to date): there is nothing to put
	// back, and their entries stay.
	Unknown []string
}

// ChangedError is an entry connect wrote that is no longer as it wrote
// it, or is gone: putting the backup's entry back would undo the user's
// change, so disconnect stops.
type ChangedError struct {
	Server, Where string
	// Line is where the entry is in the current file, or where its
	// servers' object is when the entry is gone (0: that is gone too).
	Line    int
	Removed bool
}

func (e *ChangedError) Error() string {
	what := "changed"
	if e.Removed {
		what = "removed"
	}
	return fmt.Sprintf("server %q of %s was %s since connect", e.Server, e.Where, what)
}

// Disconnect puts back, in current, each entry of h's scope that connect
// wrote, with its bytes in backup (the file from before connect), and
// leaves every other byte of current as it is: what the host wrote since
// (its own state, another project, another scope's entries) stays. An
// entry counts as connect's when it is the one connect writes for that
// server of backup, whatever mcpx-fw binary and config it names; one that
// starts mcpx-fw serve but differs, or one gone or rewired by hand from a
// scope still holding connect's entries, is a *ChangedError, and nothing
// is put back. current equal to what connect made of backup gives
// backup's bytes.
func (h Host) Disconnect(backup, current []byte) (Disconnected, error) {
	before, err := h.read(backup)
	if err != nil {
		return Disconnected{}, fmt.Errorf("backup: %w", err)
	}
	now, err := h.read(current)
	if err != nil {
		return Disconnected{}, err
	}
	out := Disconnected{Data: slices.Clone(current)}
	swaps, err := h.swaps(before, now)
	if err != nil {
		return Disconnected{}, err
	}
	for i := len(swaps) - 1; i >= 0; i-- { // from the end: earlier spans stay valid
		s := swaps[i]
		out.Data = slices.Concat(out.Data[:s.at.Start], s.back, out.Data[s.at.End:])
	}
	for _, s := range swaps {
		out.Restored = append(out.Restored, s.at.Name)
	}
	out.Unknown = unknown(before, now)
	return out, nil
}

// swap is an entry of the current file to give its backup bytes back.
type swap struct {
	at   member
	back []byte
}

// swaps are the entries of now that connect wrote, in now's order, each
// with its bytes in before. An entry of before gone from now, or now
// starting something else than before and mcpx-fw, is the user's change
// of what connect wrote when the scope holds connect's entries: then
// putting the others back would leave the scope half as it was, and it is
// an error too.
func (h Host) swaps(before, now doc) ([]swap, error) {
	var out []swap
	var lost error
	for i, m := range before.entries {
		j := same(now.entries, before.entries, i)
		switch {
		case j < 0:
			lost = cmp.Or(lost, h.removed(m.Name, now))
		case before.servers[i].Connected: // connect left it as it was
		case now.servers[j].Connected: // connect's, or the user's edit of it
			s, err := h.swapOf(before, i, now, j)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		case !bytes.Equal(now.data[now.entries[j].Start:now.entries[j].End], before.data[m.Start:m.End]):
			lost = cmp.Or[error](lost, &ChangedError{Server: m.Name, Where: h.Where(), Line: lineAt(now.data, now.entries[j].Start)})
		}
	}
	if len(out) > 0 && lost != nil {
		return nil, lost
	}
	slices.SortFunc(out, func(a, b swap) int { return a.at.Start - b.at.Start }) // the user may have moved one
	return out, nil
}

// swapOf puts before's i-th entry back in place of now's j-th, when that
// is the entry connect wrote for it.
func (h Host) swapOf(before doc, i int, now doc, j int) (swap, error) {
	m, n := before.entries[i], now.entries[j]
	want, err := h.rewritten(before, i, now.servers[j])
	if err != nil {
		return swap{}, err
	}
	if !bytes.Equal(now.data[n.Start:n.End], want) {
		return swap{}, &ChangedError{Server: m.Name, Where: h.Where(), Line: lineAt(now.data, n.Start)}
	}
	return swap{at: n, back: before.data[m.Start:m.End]}, nil
}

// same is the index in ms of the entry of others[i]: the one of its name
// with as many of that name before it (a name written twice is two
// entries), or -1.
func same(ms, others []member, i int) int {
	name, k := others[i].Name, 0
	for _, o := range others[:i] {
		if o.Name == name {
			k++
		}
	}
	for j, m := range ms {
		if m.Name == name {
			if k == 0 {
				return j
			}
			k--
		}
	}
	return -1
}

// rewritten is the entry connect writes for before's i-th server, serving
// it with the binary and config the current entry cur names.
func (h Host) rewritten(before doc, i int, cur Server) ([]byte, error) {
	m := before.entries[i]
	serve := Serve{Binary: cur.Command}
	if len(cur.Args) > 2 {
		serve.Config = cur.Args[2]
	}
	return h.entryBytes(serve, before.servers[i], before.data[m.Start:m.End], indentBefore(before.data, m.Start), indentUnit(before.data, before.top))
}

// removed names a server of the backup gone from the current file, at the
// line of the servers' object it was in.
func (h Host) removed(name string, now doc) error {
	e := &ChangedError{Server: name, Where: h.Where(), Removed: true}
	if list, ok, err := h.list(now); err == nil && ok {
		e.Line = lineAt(now.data, list.Start)
	}
	return e
}

// unknown names the servers of now that start mcpx-fw serve and that
// before does not hold.
func unknown(before, now doc) []string {
	var out []string
	for j, s := range now.servers {
		if s.Connected && same(before.entries, now.entries, j) < 0 {
			out = append(out, s.Name)
		}
	}
	return out
}
