package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
)

// The ops listener's token (metrics.token_file): required as
// `Authorization: Bearer <token>` for /metrics, each readiness check and
// the full /status; /healthz and /readyz's verdict stay open to probes
// that send none (telemetry.Access).

const (
	// maxOpsTokenFileSize bounds a token file: a token is a few dozen
	// bytes, and a file of kilobytes is the wrong file.
	maxOpsTokenFileSize = 4 << 10
	// minOpsTokenSize refuses a token short enough to guess.
	minOpsTokenSize = 16
)

// loadOpsToken reads metrics.token_file, as `serve`, `check` and
// `mcpx-fw status` do. The whole file, without surrounding white space
// (a trailing newline), is the token: at least 16 printable ASCII
// characters without spaces, as a header carries them. A file that is
// missing, unreadable, not a regular file, empty, or that group or others
// can reach is refused, and so is one in a folder they can write (they
// could put a token of their own in its place); a symbolic link is judged
// by the file it leads to, and both folders are checked. Errors name the
// file, never its bytes.
func loadOpsToken(path string) ([]byte, error) {
	f, err := openOpsToken(path)
	if err != nil {
		return nil, fmt.Errorf("metrics.token_file %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxOpsTokenFileSize))
	if err != nil {
		return nil, fmt.Errorf("metrics.token_file %s: %w", path, pathCause(err))
	}
	token := bytes.TrimSpace(b)
	if err := checkOpsToken(token); err != nil {
		return nil, fmt.Errorf("metrics.token_file %s %w; %s", path, err, opsTokenHint(path))
	}
	return token, nil
}

// openOpsToken opens the token file after checking it and its folders.
func openOpsToken(path string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", pathCause(err), opsTokenHint(path))
	}
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(real)} {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, pathCause(err)
		}
		if perm := looseMode(fi, 0o022); perm != 0 {
			return nil, fmt.Errorf("its folder %s is writable by group or others (mode %#o), so the token in it could be replaced; run: chmod go-w %s", dir, perm, dir)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, pathCause(err)
	}
	if err := checkOpsTokenFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpsTokenFile refuses an open token file that is not a regular
// file, is too large to be a token, or that group or others can reach.
func checkOpsTokenFile(f *os.File, path string) error {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return pathCause(err)
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > maxOpsTokenFileSize:
		return fmt.Errorf("the file holds %d bytes, more than the %d a token file may", fi.Size(), maxOpsTokenFileSize)
	case looseMode(fi, 0o077) != 0:
		return fmt.Errorf("the file is accessible by group or others (mode %#o): whoever can read it can read the metrics and the full status; run: chmod 600 %s",
			fi.Mode().Perm(), path)
	}
	return nil
}

// looseMode returns fi's permission bits when any of those in mask is
// set, and 0 when none is. Windows has no such mode bits (Go reports 0666
// for every writable file), so there the check is left to the ACLs of the
// user's folders.
func looseMode(fi fs.FileInfo, mask fs.FileMode) fs.FileMode {
	if perm := fi.Mode().Perm(); perm&mask != 0 && goruntime.GOOS != "windows" {
		return perm
	}
	return 0
}

// checkOpsToken says what is wrong with a token, if anything, without
// saying what it holds.
func checkOpsToken(token []byte) error {
	if len(token) == 0 {
		return errors.New("is empty")
	}
	if len(token) < minOpsTokenSize {
		return fmt.Errorf("holds a token of %d characters, want at least %d", len(token), minOpsTokenSize)
	}
	for _, c := range token {
		if c < 0x21 || c > 0x7e {
			return errors.New("holds a character a token may not: a token is printable ASCII without spaces")
		}
	}
	return nil
}

func opsTokenHint(path string) string {
	return fmt.Sprintf("make one with: head -c 32 /dev/urandom | base64 > %s && chmod 600 %s", path, path)
}

// pathCause is err without the path an *fs.PathError repeats: the
// caller names the file once.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// opsAccess judges each request to the ops listener: with no token
// required, every request reads everything; otherwise a request without
// an Authorization header reads what a probe needs, one with the token
// reads everything, and any other (a wrong token, another scheme, two
// headers) is refused. Tokens are compared as SHA-256 digests in constant
// time, so neither their bytes nor their length leak through timing.
func opsAccess(token []byte) func(*http.Request) telemetry.Access {
	if token == nil {
		return telemetry.Everyone
	}
	want := sha256.Sum256(token)
	return func(r *http.Request) telemetry.Access {
		values, sent := r.Header["Authorization"]
		if !sent {
			return telemetry.Public
		}
		scheme, got, _ := strings.Cut(values[0], " ")
		sum := sha256.Sum256([]byte(got))
		if len(values) == 1 && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
			return telemetry.Full
		}
		return telemetry.Refused
	}
}
