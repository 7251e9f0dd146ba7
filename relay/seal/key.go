package seal

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadKey reads <stateDir>/seal.key, creating stateDir (0700) and the
// key (32 bytes from crypto/rand, 0600) if missing. A key others can read
// or the wrong size is refused, not replaced: replacing it would silently
// void every state already issued, and a readable key lets anyone forge.
func LoadKey(stateDir string) ([]byte, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir for the seal key: %w", err)
	}
	if err := checkSealDir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, sealKeyFile)
	key, err := readSealKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createSealKey(stateDir, path); err != nil {
		return nil, err
	}
	return readSealKey(path)
}

// checkSealDir refuses a folder holding a seal key (the state dir, or
// seal.key_file's) that others can write: they could swap in a key of
// their own and forge states. Its error names the folder, whichever it is.
func checkSealDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("seal key dir: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("folder %s is writable by group or others (mode %#o), so the seal key in it could be replaced; run: chmod go-w %s",
			dir, perm, dir)
	}
	return nil
}

// readSealKey reads and checks an existing key. A missing file is
// reported as fs.ErrNotExist so the caller can create it.
func readSealKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open seal key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal key %s: %w", path, err)
	}
	if err := checkSealKeyFile(path, fi); err != nil {
		return nil, err
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read seal key %s: %w", path, err)
	}
	return key, nil
}

// checkSealKeyFile checks the opened file's own mode and size (not the
// path's, which could change in between).
func checkSealKeyFile(path string, fi fs.FileInfo) error {
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("seal key %s is not a regular file; remove it and restart to create a new key", path)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("seal key %s is accessible by group or others (mode %#o); run: chmod 600 %s",
			path, fi.Mode().Perm(), path)
	case fi.Size() != KeySize:
		return fmt.Errorf("seal key %s holds %d bytes, want %d; remove it and restart to create a new key "+
			"(requestStates already issued will then be refused)", path, fi.Size(), KeySize)
	}
	return nil
}

// createSealKey installs a new key at path unless one is already there.
// The key is written and synced to a private temp file first, then
// hard-linked into place: link, like O_EXCL, fails if path exists, but
// unlike O_EXCL on path itself no other process can ever read a
// half-written key. The loser of a race keeps the winner's key.
func createSealKey(dir, path string) error {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("generate seal key: %w", err)
	}
	tmp, err := writeTempKey(dir, key)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("install seal key %s: %w", path, err)
	}
	return nil
}

// writeTempKey writes key to a new 0600 file in dir and returns its name.
func writeTempKey(dir string, key []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+sealKeyFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create seal key: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write seal key: %w", err)
	}
	return f.Name(), nil
}
