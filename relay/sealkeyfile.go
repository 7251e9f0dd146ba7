package relay

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxSealKeyFileSize bounds a shared key file: a key is a few dozen bytes,
// and a file of kilobytes is the wrong file.
const maxSealKeyFileSize = 4 << 10

// LoadSealKeyFile reads the requestState key that several serve replicas
// share (seal.key_file): every replica behind one address must seal and
// open with the same key, or a retry that reaches another replica is
// refused as tampered. Unlike the state dir's seal.key it is never
// created: replicas that each made their own would each refuse the
// others' states, silently. The whole file is the key (at least 32 bytes,
// as from `head -c 32 /dev/urandom`); a file that is missing, unreadable,
// not a regular file, shorter than that, or that group or others can
// reach is refused, and so is one in a folder they can write (they could
// put a key of their own in its place). A symbolic link is judged by the
// file it leads to, and the folders of both the link and that file are
// checked. Errors name the file, never its bytes.
func LoadSealKeyFile(path string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("seal key file: %w (make one with: head -c 32 /dev/urandom > %s && chmod 600 %s)", err, path, path)
	}
	// A link's folder can replace the link, the file's folder the file.
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(real)} {
		if err := checkSealDir(dir); err != nil {
			return nil, fmt.Errorf("seal key file %s: %w", path, err)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("seal key file: %w (make one with: head -c 32 /dev/urandom > %s && chmod 600 %s)", err, path, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal key file %s: %w", path, err)
	}
	switch perm := fi.Mode().Perm(); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("seal key file %s is not a regular file", path)
	case perm&0o077 != 0:
		return nil, fmt.Errorf("seal key file %s is accessible by group or others (mode %#o): anyone who can read it can forge requestStates; run: chmod 600 %s",
			path, perm, path)
	case fi.Size() > maxSealKeyFileSize:
		return nil, fmt.Errorf("seal key file %s holds %d bytes, more than the %d a key file may", path, fi.Size(), maxSealKeyFileSize)
	}
	key, err := io.ReadAll(io.LimitReader(f, maxSealKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read seal key file %s: %w", path, err)
	}
	if len(key) < sealKeySize || len(key) > maxSealKeyFileSize {
		return nil, fmt.Errorf("seal key file %s holds %d bytes, want at least %d; make one with: head -c 32 /dev/urandom > %s",
			path, len(key), sealKeySize, path)
	}
	return key, nil
}

// SealKeyID names a seal key without revealing it: the start of an
// HMAC-SHA256, under the key, of a fixed label. Replicas behind one
// address must all show the same id (`mcpx-fw check`, serve's "serving"
// line): replicas holding different keys refuse each other's states as
// tampered, and nothing else tells the operator why.
func SealKeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpx-fw seal key id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}
