// Package bundletest gives tests the parts of a real bundle set-up: the
// stock opa binary, signing keys, bundles made by `opa build
// --signing-key`, and a bundle service over HTTP. It imports only
// the standard library and only tests import it.
//
// opa comes from go.mod's tool directive (github.com/open-policy-agent/opa),
// built from the module graph: it needs only the module proxy or cache.
package bundletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// opaOnce finds the opa binary of go.mod's tool directive (the version
// the engine links) once per test binary: `go tool -n opa` builds it if
// needed and prints its path in the build cache, so nothing is left in a
// temporary folder and a second run costs no build.
var opaOnce = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "opa").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n opa: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// OPA is the stock opa binary's path.
func OPA(t testing.TB) string {
	t.Helper()
	bin, err := opaOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Key is a signing key pair on disk: Private for `opa build
// --signing-key`, Public for policy.bundle.signing.public_key.
type Key struct{ Private, Public string }

// NewKey makes an ECDSA P-256 key pair (ES256) in a fresh folder.
func NewKey(t testing.TB) Key {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := Key{Private: filepath.Join(dir, "private.pem"), Public: filepath.Join(dir, "public.pem")}
	writePEM(t, k.Private, "PRIVATE KEY", privDER)
	writePEM(t, k.Public, "PUBLIC KEY", pubDER)
	return k
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Build runs `opa build -b . --signing-key key.Private --signing-alg ES256
// --revision revision` in dir (so module paths do not carry dir) and
// returns the bundle's bytes. A zero key builds an unsigned bundle; an
// empty revision leaves the manifest's out. extra are more opa build
// flags (--ignore ...).
func Build(t testing.TB, dir string, key Key, revision string, extra ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	args := []string{"build", "-b", ".", "-o", out}
	if key.Private != "" {
		args = append(args, "--signing-key", key.Private, "--signing-alg", "ES256")
	}
	if revision != "" {
		args = append(args, "--revision", revision)
	}
	cmd := exec.Command(OPA(t), append(args, extra...)...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opa %v: %v\n%s", args, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
