package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The edit folder holds what the review CLI writes for the operator: the
// document `review approve --edit` opens in the editor, kept after a
// refusal for a retry with --edit-file. It is a folder of the state dir,
// which no isolated upstream can reach (serve covers the whole state dir),
// never the shared temporary folder, where any process of the account could
// watch for the document and write its own back after the editor saved.
// The folder is made 0700 without following a symbolic link, and refused
// when it is not this account's own; the document is created new in it and
// read back by name from the folder held open, as a regular file of this
// account's, never through a link. Editors that save by writing a new file
// and renaming it over the old one (vim, sed -i, many GUI editors) leave
// such a file at the same name.

// editFolderName is the edit folder's name in the state dir.
const editFolderName = "edits"

// maxEditDoc bounds what is read back: a document many times larger than
// any request the firewall holds is not one the editor saved.
const maxEditDoc = 64 << 20

// editFolder is the edit folder, held open.
type editFolder struct {
	path string // for the editor and the operator
	root *os.Root
}

// openEditFolder opens (and first makes) the edit folder of stateDir.
func openEditFolder(stateDir string) (*editFolder, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("the state dir: %w", err)
	}
	state, err := os.OpenRoot(stateDir)
	if err != nil {
		return nil, fmt.Errorf("the state dir: %w", err)
	}
	defer state.Close()
	path := filepath.Join(stateDir, editFolderName)
	if err := state.Mkdir(editFolderName, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("the edit folder %s: %w", path, err)
	}
	seen, err := state.Lstat(editFolderName)
	if err != nil {
		return nil, fmt.Errorf("the edit folder %s: %w", path, err)
	}
	if !seen.IsDir() {
		return nil, fmt.Errorf("the edit folder %s is not a folder (%s); remove it", path, seen.Mode().Type())
	}
	root, err := state.OpenRoot(editFolderName)
	if err != nil {
		return nil, fmt.Errorf("the edit folder %s: %w", path, err)
	}
	f := &editFolder{path: path, root: root}
	if err := f.verify(seen); err != nil {
		root.Close()
		return nil, err
	}
	return f, nil
}

// verify refuses a folder other than the one seen (swapped while it was
// opened), one of another account, and one group or others may enter.
func (f *editFolder) verify(seen fs.FileInfo) error {
	opened, err := f.root.Stat(".")
	switch {
	case err != nil:
		return fmt.Errorf("the edit folder %s: %w", f.path, err)
	case !os.SameFile(seen, opened):
		return fmt.Errorf("the edit folder %s changed while it was opened", f.path)
	case !ownedByMe(opened):
		return fmt.Errorf("the edit folder %s is not yours; remove it", f.path)
	case privateMode && opened.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("the edit folder %s is accessible by group or others (mode %#o); run: chmod 700 %s", f.path, opened.Mode().Perm(), f.path)
	}
	return nil
}

func (f *editFolder) Close() { f.root.Close() }

// name is the full path of a file of the folder.
func (f *editFolder) name(file string) string { return filepath.Join(f.path, file) }

// create writes doc to a new file of the folder (0600: it holds prompt
// text), named prefix, a random part and ".yaml", and returns its name.
func (f *editFolder) create(prefix string, doc []byte) (string, error) {
	for {
		name := prefix + rand.Text()[:10] + ".yaml"
		file, err := f.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("the edit document: %w", err)
		}
		_, err = file.Write(doc)
		if err = errors.Join(err, file.Close()); err != nil {
			_ = f.root.Remove(name)
			return "", fmt.Errorf("the edit document: %w", err)
		}
		return name, nil
	}
}

// read reads back a document of the folder: a regular file of this
// account's at that name, the one opened being the one looked at (no
// symbolic link, nothing swapped in between).
func (f *editFolder) read(name string) ([]byte, error) {
	seen, err := f.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !seen.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", f.name(name), seen.Mode().Type())
	}
	file, err := f.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	opened, err := file.Stat()
	switch {
	case err != nil:
		return nil, err
	case !os.SameFile(seen, opened):
		return nil, fmt.Errorf("%s changed while it was opened", f.name(name))
	case !ownedByMe(opened):
		return nil, fmt.Errorf("%s is not yours", f.name(name))
	}
	b, err := io.ReadAll(io.LimitReader(file, maxEditDoc+1))
	if err == nil && len(b) > maxEditDoc {
		err = fmt.Errorf("%s is over %d MiB", f.name(name), maxEditDoc>>20)
	}
	return b, err
}

// remove removes a document of the folder (the entry itself, whatever it
// is now).
func (f *editFolder) remove(name string) { _ = f.root.Remove(name) }

// holds reports whether path names a file of the folder, and its name
// there: an edit kept after a refusal, given back with --edit-file.
func (f *editFolder) holds(path string) (string, bool) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	mine, err := filepath.EvalSymlinks(f.path)
	if err != nil || dir != mine {
		return "", false
	}
	return filepath.Base(path), true
}

// pruneEdits removes the documents of stateDir's edit folder last written
// longer ago than retain, and returns how many: they hold prompt text,
// which review.retain erases from the queue too, and a refused edit nobody
// gave back would otherwise stay for good. A state dir without an edit
// folder has none, and gets none; a retain of 0 keeps everything, as it
// does in the queue.
func pruneEdits(stateDir string, retain time.Duration) (int, error) {
	if retain <= 0 {
		return 0, nil
	}
	if _, err := os.Lstat(filepath.Join(stateDir, editFolderName)); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	f, err := openEditFolder(stateDir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.prune(time.Now().Add(-retain))
}

// prune removes the regular files of the folder last written before t.
func (f *editFolder) prune(t time.Time) (int, error) {
	dir, err := f.root.Open(".")
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	n := 0
	for _, e := range entries {
		info, ierr := e.Info()
		if ierr == nil && info.Mode().IsRegular() && info.ModTime().Before(t) && f.root.Remove(e.Name()) == nil {
			n++
		}
	}
	return n, err
}
