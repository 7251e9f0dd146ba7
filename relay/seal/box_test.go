package seal

import (
	"bytes"
	"errors"
	"testing"
)

// TestBox: what one replica boxes for another opens only with the shared
// key and under the name it was boxed for; a box changed in any byte, or
// moved to another name (another handover's row), does not open, and the
// box does not hold the plain text.
func TestBox(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	s := New(key, nil)
	plain := []byte(`{"answers":{"sampling-1-1":{"role":"assistant"}}}`)
	box, err := s.Box(plain, "nonce-a")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(box, []byte("assistant")) {
		t.Fatal("the box holds its plain text")
	}
	if got, err := New(key, nil).Unbox(box, "nonce-a"); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("another replica with the key: %q, %v", got, err)
	}
	other := New(bytes.Repeat([]byte{8}, KeySize), nil)
	changed := bytes.Clone(box)
	changed[len(changed)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another key":  func() ([]byte, error) { return other.Unbox(box, "nonce-a") },
		"another name": func() ([]byte, error) { return s.Unbox(box, "nonce-b") },
		"changed":      func() ([]byte, error) { return s.Unbox(changed, "nonce-a") },
		"cut short":    func() ([]byte, error) { return s.Unbox(box[:5], "nonce-a") },
	} {
		if got, err := open(); !errors.Is(err, ErrBoxOpen) || got != nil {
			t.Errorf("%s: %q, %v; want ErrBoxOpen", name, got, err)
		}
	}
}
