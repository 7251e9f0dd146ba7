package policybundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/open-policy-agent/opa/v1/bundle"
)

// ErrNoPersisted is LoadPersisted's error when no bundle was kept yet.
var ErrNoPersisted = errors.New("no persisted bundle")

// PersistedPath is where the last bundle the engine activated is kept:
// <stateDir>/bundles/<Name>/bundle.tar.gz.
func PersistedPath(stateDir string) string {
	return filepath.Join(stateDir, "bundles", Name, "bundle.tar.gz")
}

// PersistedPath is this source's PersistedPath, under its bundle's name.
func (s *Source) PersistedPath() string {
	return filepath.Join(s.cfg.StateDir, "bundles", s.cfg.Bundle, "bundle.tar.gz")
}

// LoadPersisted reads the kept bundle and verifies it again, exactly as a
// download: the state dir is a file on disk, and a file edited there must
// not decide. ErrNoPersisted when there is none.
func (s *Source) LoadPersisted() (*bundle.Bundle, error) {
	path := s.PersistedPath()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoPersisted
	}
	if err != nil {
		return nil, err
	}
	b, err := s.read(raw)
	if err != nil {
		return nil, fmt.Errorf("persisted bundle %s is refused (remove it to download afresh): %w", path, err)
	}
	return b, nil
}

// Persist keeps raw as the last good bundle. The engine calls it only
// after the bundle compiled and decides. The file is written beside its
// final name, synced and renamed over it, so a crash leaves the old
// bundle or the new one, never half of one.
func (s *Source) Persist(raw []byte) error {
	path := s.PersistedPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("persist bundle: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bundle-*.tar.gz")
	if err != nil {
		return fmt.Errorf("persist bundle: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, werr := tmp.Write(raw)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("persist bundle: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("persist bundle: %w", err)
	}
	return nil
}
