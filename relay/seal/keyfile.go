package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/relay/secret"
)

// maxSealKeyFileSize bounds a shared key file (secret.File.Max).
const maxSealKeyFileSize = 4 << 10

// LoadKeyFile reads the requestState key that several serve replicas
// share (seal.key_file): every replica behind one address must seal and
// open with the same key, or a retry that reaches another replica is
// refused as tampered. Unlike the state dir's seal.key it is never
// created: replicas that each made their own would each refuse the
// others' states, silently. The whole file is the key (at least 32 bytes,
// as from `head -c 32 /dev/urandom`), read as a secret.File (one that group
// or others can reach, or replace, is refused). Errors name the file,
// never its bytes.
func LoadKeyFile(path string) ([]byte, error) {
	key, err := secret.File{Path: path, Max: maxSealKeyFileSize, Grants: "can forge requestStates",
		Make: fmt.Sprintf("head -c 32 /dev/urandom > %s && chmod 600 %s", path, path)}.Read()
	if err != nil {
		return nil, fmt.Errorf("seal key file %s: %w", path, err)
	}
	if len(key) < KeySize {
		return nil, fmt.Errorf("seal key file %s holds %d bytes, want at least %d; make one with: head -c 32 /dev/urandom > %s",
			path, len(key), KeySize, path)
	}
	return key, nil
}

// KeyID names a seal key without revealing it: the start of an
// HMAC-SHA256, under the key, of a fixed label. Replicas behind one
// address must all show the same id (`mcpx-fw check`, serve's "serving"
// line): replicas holding different keys refuse each other's states as
// tampered, and nothing else tells the operator why.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpx-fw seal key id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}
