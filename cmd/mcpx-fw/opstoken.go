package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/engine/telemetry"
	"github.com/mcpx-fw/mcpx-fw/relay/secret"
)

// The ops listener's token (metrics.token_file): required as
// `Authorization: Bearer <token>` for /metrics, each readiness check and
// the full /status; /healthz and /readyz's verdict stay open to probes
// that send none (telemetry.Access).

const (
	// maxOpsTokenFileSize bounds a token file (secret.File.Max).
	maxOpsTokenFileSize = 4 << 10
	// minOpsTokenSize refuses a token short enough to guess.
	minOpsTokenSize = 16
)

// loadOpsToken reads metrics.token_file, as `serve`, `check` and
// `mcpx-fw status` do, as a secret.File: one that group or others can
// reach, or replace, is refused. The whole file, without surrounding white
// space (a trailing newline), is the token: at least 16 printable ASCII
// characters without spaces, as a header carries them. Errors name the
// file, never its bytes.
func loadOpsToken(path string) ([]byte, error) {
	b, err := secret.File{Path: path, Max: maxOpsTokenFileSize, Make: opsTokenHint(path),
		Grants: "can read the metrics and the full status"}.Read()
	if err != nil {
		return nil, fmt.Errorf("metrics.token_file %s: %w", path, err)
	}
	token := bytes.TrimSpace(b)
	if err := checkOpsToken(token); err != nil {
		return nil, fmt.Errorf("metrics.token_file %s %w; make one with: %s", path, err, opsTokenHint(path))
	}
	return token, nil
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

// opsTokenHint is the command that makes a token file at path.
func opsTokenHint(path string) string {
	return fmt.Sprintf("head -c 32 /dev/urandom | base64 > %s && chmod 600 %s", path, path)
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
