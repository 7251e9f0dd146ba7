package secret

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// File is a file holding a secret only this account may reach.
type File struct {
	Path string
	// Max bounds the file: a secret is a few dozen bytes, and a file of
	// kilobytes is the wrong file.
	Max int64
	// Make is the command that makes one, said when there is none.
	Make string
	// Grants is what whoever reads the file can do, said when group or
	// others can.
	Grants string
}

// Read returns the file's bytes. A file that is missing, unreadable, not
// a regular file, larger than Max, or that group or others can reach is
// refused, and so is one in a folder they can write (they could put a
// secret of their own in its place). A symbolic link is judged by the
// file it leads to, and the folders of both are checked (a link's folder
// can replace the link, the file's folder the file); the mode and size
// checked are the opened file's, not a path's that could change in
// between. Errors say what to run, and never hold the file's bytes; the
// caller names the file.
func (f File) Read() ([]byte, error) {
	real, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return nil, f.openError(err)
	}
	for _, dir := range []string{filepath.Dir(f.Path), filepath.Dir(real)} {
		if err := checkSecretDir(dir); err != nil {
			return nil, err
		}
	}
	file, err := os.Open(real)
	if err != nil {
		return nil, f.openError(err)
	}
	defer file.Close()
	if err := f.verify(file); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(file, f.Max+1))
	if err != nil {
		return nil, pathCause(err)
	}
	if int64(len(b)) > f.Max {
		return nil, f.tooLarge(int64(len(b)))
	}
	return b, nil
}

// openError is why the file could not be opened, with how to make one
// when there is none.
func (f File) openError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w; make one with: %s", pathCause(err), f.Make)
	}
	return pathCause(err)
}

// checkSecretDir refuses a folder group or others can write.
func checkSecretDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return pathCause(err)
	}
	if perm := looseMode(fi, 0o022); perm != 0 {
		return fmt.Errorf("its folder %s is writable by group or others (mode %#o), so the file in it could be replaced; run: chmod go-w %s", dir, perm, dir)
	}
	return nil
}

// verify refuses an open file that is not a regular file, is larger than
// Max, or that group or others can reach.
func (f File) verify(file *os.File) error {
	fi, err := file.Stat()
	switch {
	case err != nil:
		return pathCause(err)
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > f.Max:
		return f.tooLarge(fi.Size())
	case looseMode(fi, 0o077) != 0:
		return fmt.Errorf("the file is accessible by group or others (mode %#o): whoever can read it %s; run: chmod 600 %s",
			fi.Mode().Perm(), f.Grants, f.Path)
	}
	return nil
}

func (f File) tooLarge(size int64) error {
	return fmt.Errorf("the file holds %d bytes, more than the %d it may", size, f.Max)
}

// looseMode returns fi's permission bits when any of those in mask is
// set, and 0 when none is. Windows has no such mode bits (Go reports 0666
// for every writable file), so there the check is left to the ACLs of the
// user's folders.
func looseMode(fi fs.FileInfo, mask fs.FileMode) fs.FileMode {
	if perm := fi.Mode().Perm(); perm&mask != 0 && runtime.GOOS != "windows" {
		return perm
	}
	return 0
}

// pathCause is err without the path an *fs.PathError repeats: the caller
// names the file once.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
