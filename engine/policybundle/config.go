package policybundle

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/keys"
)

// Defaults, as OPA's bundle plugin has them.
const (
	DefaultResource = "bundles/bundle.tar.gz"
	DefaultMinDelay = 60 * time.Second
	DefaultMaxDelay = 120 * time.Second
	DefaultKeyID    = "default" // the kid `opa build --signing-key` writes
	// DefaultSizeLimitBytes bounds a bundle as a whole, decompressed (OPA's
	// own default, per file, is 1 GiB): mcpx-fw's policies are a few hundred KiB, and the
	// bytes are untrusted until verified.
	DefaultSizeLimitBytes = 32 << 20
)

// Name is the bundle's name: in OPA's decision-log "bundles" map and in
// the state dir's bundles/<name>/.
const Name = "mcpxfw"

// Config is where the bundle comes from and how it is checked.
type Config struct {
	URL      string // the bundle service's base URL, http or https
	Resource string // path below URL; default DefaultResource
	// MinDelay and MaxDelay bound the wait between polls (whole seconds,
	// as OPA counts them); defaults DefaultMinDelay and DefaultMaxDelay.
	MinDelay, MaxDelay time.Duration
	// LongPollingTimeout, when set, asks a service that offers long
	// polling to hold each request this long until a new bundle is there
	// (OPA's long_polling_timeout_seconds); 0 (default) polls.
	LongPollingTimeout time.Duration
	// PublicKeyFile is a PEM public key; set, every bundle must carry a
	// signature by it (OPA refuses an unsigned bundle then).
	PublicKeyFile string
	KeyID         string // the key's id in the signature; default DefaultKeyID
	Algorithm     string // default: from the key (RS256, or ES256/384/512)
	Scope         string // the signature's scope, when the signer sets one
	Headers       map[string]string
	BearerToken   string // sent as "Authorization: Bearer <token>"
	// SizeLimitBytes bounds the whole bundle decompressed (bound.go), and
	// so each file in it; default DefaultSizeLimitBytes.
	SizeLimitBytes int64
	// StateDir holds bundles/<Name>/bundle.tar.gz, the last good bundle.
	StateDir string
	// Bundle names the folder of the state dir's bundles/ the last good
	// bundle is kept in; default Name. A shadow policy's is ShadowName,
	// so the two never share a persisted file.
	Bundle string
}

// ShadowName is the name of a shadow policy's bundle (Config.Bundle).
const ShadowName = "mcpxfw-shadow"

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Resource == "" {
		c.Resource = DefaultResource
	}
	if c.MinDelay == 0 && c.MaxDelay == 0 {
		c.MinDelay, c.MaxDelay = DefaultMinDelay, DefaultMaxDelay
	}
	if c.KeyID == "" {
		c.KeyID = DefaultKeyID
	}
	if c.SizeLimitBytes == 0 {
		c.SizeLimitBytes = DefaultSizeLimitBytes
	}
	if c.Bundle == "" {
		c.Bundle = Name
	}
	return c
}

// Verify reports the first problem with c as a short error naming what is
// wrong, so a bad bundle set-up stops start-up instead of failing polls.
func (c Config) Verify() error {
	c = c.withDefaults()
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("url: must be an http:// or https:// URL")
	}
	if u.Scheme == "http" && c.PublicKeyFile == "" && !loopback(u.Hostname()) {
		return errors.New("url: an http:// bundle service on another host, with no signing.public_key, lets anyone on the network path choose the policy: use https://, or sign bundles (opa build --signing-key) and set signing.public_key")
	}
	if c.MinDelay < time.Second || c.MaxDelay < c.MinDelay {
		return errors.New("polling: min_delay must be at least 1s and max_delay at least min_delay")
	}
	if c.LongPollingTimeout != 0 && c.LongPollingTimeout < time.Second {
		return errors.New("polling: long_polling_timeout must be 0 (off) or at least 1s")
	}
	if c.SizeLimitBytes < 0 {
		return errors.New("size_limit_bytes: must be positive")
	}
	if c.PublicKeyFile != "" {
		if _, err := c.keyConfig(); err != nil {
			return fmt.Errorf("signing.public_key: %w", err)
		}
	}
	return nil
}

// keyConfig reads the public key and names its algorithm, refusing
// anything that is not a PEM public key OPA can verify with.
func (c Config) keyConfig() (*keys.Config, error) {
	pemBytes, err := os.ReadFile(c.PublicKeyFile)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("%s is not PEM", c.PublicKeyFile)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s is not a PEM public key (PKIX, \"BEGIN PUBLIC KEY\"): %w", c.PublicKeyFile, err)
	}
	alg := c.Algorithm
	if alg == "" {
		if alg, err = keyAlgorithm(pub); err != nil {
			return nil, fmt.Errorf("%s: %w", c.PublicKeyFile, err)
		}
	}
	if !keys.IsSupportedAlgorithm(alg) {
		return nil, fmt.Errorf("algorithm %q is not one OPA verifies", alg)
	}
	return &keys.Config{Key: string(pemBytes), Algorithm: alg, Scope: c.Scope}, nil
}

// keyAlgorithm is the signing algorithm `opa build --signing-alg` would
// use with a key of pub's kind.
func keyAlgorithm(pub any) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RS256", nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	}
	return "", fmt.Errorf("a %T key: only RSA and ECDSA (P-256, P-384, P-521) keys are supported", pub)
}

// verification is OPA's verification config, nil without a key (then
// OPA accepts unsigned bundles, and refuses signed ones it cannot check).
func (c Config) verification() (*bundle.VerificationConfig, error) {
	if c.PublicKeyFile == "" {
		return nil, nil
	}
	kc, err := c.keyConfig()
	if err != nil {
		return nil, err
	}
	return bundle.NewVerificationConfig(map[string]*bundle.KeyConfig{c.KeyID: kc}, c.KeyID, c.Scope, nil), nil
}

// restConfig is OPA's services config for the bundle service.
func (c Config) restConfig() ([]byte, error) {
	svc := map[string]any{"url": c.URL}
	if len(c.Headers) > 0 {
		svc["headers"] = c.Headers
	}
	if c.BearerToken != "" {
		svc["credentials"] = map[string]any{"bearer": map[string]any{"token": c.BearerToken}}
	}
	return json.Marshal(svc)
}

// downloadConfig is OPA's downloader config: periodic polling between
// MinDelay and MaxDelay, long polling when configured and the service
// answers with OPA's bundle content type.
func (c Config) downloadConfig() (download.Config, error) {
	minS, maxS := int64(c.MinDelay/time.Second), int64(c.MaxDelay/time.Second)
	dc := download.Config{Polling: download.PollingConfig{MinDelaySeconds: &minS, MaxDelaySeconds: &maxS}}
	if c.LongPollingTimeout > 0 {
		longS := int64(c.LongPollingTimeout / time.Second)
		dc.Polling.LongPollingTimeoutSeconds = &longS
	}
	return dc, dc.ValidateAndInjectDefaults()
}

// loopback reports whether host names only this machine, where an
// unsigned bundle over http crosses no network.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
