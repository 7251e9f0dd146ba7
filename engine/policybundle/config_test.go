package policybundle

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pemFile writes der as a PEM block of kind and returns its path.
func pemFile(t *testing.T, kind string, der []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func publicPEM(t *testing.T, pub any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pemFile(t, "PUBLIC KEY", der)
}

// TestConfigCheck: every problem is one short error naming its key; the
// algorithm follows the key.
func TestConfigCheck(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{URL: "https://bundles.example.com"}
	with := func(f func(*Config)) Config { c := ok; f(&c); return c }
	tests := []struct {
		name    string
		cfg     Config
		errHas  string // "" = valid
		wantAlg string
	}{
		{"defaults", ok, "", ""},
		{"rsa key", with(func(c *Config) { c.PublicKeyFile = publicPEM(t, &rsaKey.PublicKey) }), "", "RS256"},
		{"ecdsa p-384 key", with(func(c *Config) { c.PublicKeyFile = publicPEM(t, &ecKey.PublicKey) }), "", "ES384"},
		{"rsa key, PS256", with(func(c *Config) { c.PublicKeyFile, c.Algorithm = publicPEM(t, &rsaKey.PublicKey), "PS256" }), "", "PS256"},
		{"http, unsigned, another host", with(func(c *Config) { c.URL = "http://bundles.example.com" }), "url: an http:// bundle service", ""},
		{"http, signed, another host", with(func(c *Config) {
			c.URL, c.PublicKeyFile = "http://bundles.example.com", publicPEM(t, &ecKey.PublicKey)
		}), "", "ES384"},
		{"http, unsigned, loopback", with(func(c *Config) { c.URL = "http://127.0.0.1:8181" }), "", ""},
		{"ftp url", with(func(c *Config) { c.URL = "ftp://bundles.example.com" }), "url:", ""},
		{"no host", with(func(c *Config) { c.URL = "https:///bundles" }), "url:", ""},
		{"polling under a second", with(func(c *Config) { c.MinDelay, c.MaxDelay = 500*time.Millisecond, time.Second }), "polling:", ""},
		{"max below min", with(func(c *Config) { c.MinDelay, c.MaxDelay = 10*time.Second, 5*time.Second }), "polling:", ""},
		{"key file missing", with(func(c *Config) { c.PublicKeyFile = "/nonexistent.pem" }), "signing.public_key: open /nonexistent.pem", ""},
		{"private key", with(func(c *Config) { c.PublicKeyFile = pemFile(t, "PRIVATE KEY", privDER) }), "not a PEM public key", ""},
		{"not PEM", with(func(c *Config) { c.PublicKeyFile = os.DevNull }), "is not PEM", ""},
		{"ed25519 key", with(func(c *Config) { c.PublicKeyFile = publicPEM(t, edPub) }), "only RSA and ECDSA", ""},
		{"unknown algorithm", with(func(c *Config) { c.PublicKeyFile, c.Algorithm = publicPEM(t, &rsaKey.PublicKey), "XS1" }), "not one OPA verifies", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Verify()
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.errHas) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Verify() = %v, want one line with %q", err, tt.errHas)
			}
			if tt.wantAlg == "" {
				return
			}
			vc, err := tt.cfg.withDefaults().verification()
			if err != nil {
				t.Fatal(err)
			}
			if got := vc.PublicKeys[DefaultKeyID].Algorithm; got != tt.wantAlg || vc.KeyID != DefaultKeyID {
				t.Errorf("algorithm %s under key id %s, want %s under %s", got, vc.KeyID, tt.wantAlg, DefaultKeyID)
			}
		})
	}
}
