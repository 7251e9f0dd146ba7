package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// boxDomain derives the box key from the seal key, so the two never
// serve one purpose with one key, and names the format's version.
const boxDomain = "mcpx-fw/box/v1"

// ErrBoxOpen is why Unbox refuses a box: altered, sealed with another key,
// or bound to another name.
var ErrBoxOpen = errors.New("box does not open")

// Box encrypts and authenticates plain with the replicas' shared key
// (AES-256-GCM, under a key derived from the seal key), bound to name:
// what one replica writes into the shared store for another (a handed-over
// retry's answers, the upstream's answer to it) stays unreadable to
// whoever reads the database, and a box moved to another name does not
// open.
func (s *Sealer) Box(plain []byte, name string) ([]byte, error) {
	aead, err := s.boxCipher()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("box: %w", err)
	}
	return aead.Seal(nonce, nonce, plain, []byte(name)), nil
}

// Unbox opens what Box sealed under name.
func (s *Sealer) Unbox(box []byte, name string) ([]byte, error) {
	aead, err := s.boxCipher()
	if err != nil {
		return nil, err
	}
	if len(box) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: too short", ErrBoxOpen)
	}
	plain, err := aead.Open(nil, box[:aead.NonceSize()], box[aead.NonceSize():], []byte(name))
	if err != nil {
		return nil, ErrBoxOpen
	}
	return plain, nil
}

// boxCipher is AES-256-GCM under HMAC-SHA256(seal key, boxDomain).
func (s *Sealer) boxCipher() (cipher.AEAD, error) {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(boxDomain))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("box: %w", err)
	}
	return cipher.NewGCM(block)
}
