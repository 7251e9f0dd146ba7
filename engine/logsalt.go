package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LogSaltFile is the decision-log salt's file in the state dir.
const LogSaltFile = "decision-log.salt"

// logSaltBytes is the salt's length: 256 bits.
const logSaltBytes = 32

// LoadLogSalt returns the decision-log salt kept in dir, creating dir
// (0700) and the salt (0600) on first use: with the queue on PostgreSQL
// nothing else may have made the state dir yet. Keeping it in the state dir, beside the review queue that
// holds the same texts in clear, means a text's digest is the same in every
// serve process sharing the dir and across restarts, so an operator can
// follow one prompt through days of logs. The salt never leaves the dir;
// without it the digests cannot be tested against guessed texts.
func LoadLogSalt(dir string) ([]byte, error) {
	path := filepath.Join(dir, LogSaltFile)
	salt, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createLogSalt(dir, path); err != nil {
			return nil, err
		}
		salt, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("decision log salt: %w", err)
	}
	if len(salt) != logSaltBytes {
		return nil, fmt.Errorf("decision log salt %s: %d bytes, want %d; remove it to make a new one", path, len(salt), logSaltBytes)
	}
	return salt, nil
}

// createLogSalt writes a fresh salt to a temporary file and links it into
// place, so two processes starting together agree on one salt and neither
// ever reads a half-written file.
func createLogSalt(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("decision log salt: %w", err)
	}
	salt := make([]byte, logSaltBytes)
	_, _ = rand.Read(salt)
	tmp, err := os.CreateTemp(dir, ".salt-*")
	if err != nil {
		return fmt.Errorf("decision log salt: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(salt)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("decision log salt: %w", err)
	}
	return nil
}
