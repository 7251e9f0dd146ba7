package config

import (
	"time"

	"github.com/spf13/viper"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
)

// Bundle is policy.bundle: the policy as an OPA bundle from a bundle
// service, polled as OPA polls it, instead of policy.dir.
type Bundle struct {
	// URL is the service's base URL; "" (default) keeps policy.dir with
	// hot reload.
	URL      string `mapstructure:"url"`
	Resource string `mapstructure:"resource"` // default bundles/bundle.tar.gz, as OPA
	Polling  struct {
		MinDelay time.Duration `mapstructure:"min_delay"` // default 60s, as OPA
		MaxDelay time.Duration `mapstructure:"max_delay"` // default 120s, as OPA
		// LongPollingTimeout: 0 (default) polls; set, a service that
		// offers long polling holds each request up to this long.
		LongPollingTimeout time.Duration `mapstructure:"long_polling_timeout"`
	} `mapstructure:"polling"`
	Signing struct {
		// PublicKey is a PEM public key file; set, an unsigned bundle or
		// one signed by another key is refused. Default "" (no check).
		PublicKey string `mapstructure:"public_key"`
		KeyID     string `mapstructure:"key_id"`    // default "default", as opa build writes
		Algorithm string `mapstructure:"algorithm"` // default: from the key
		Scope     string `mapstructure:"scope"`     // default "" (none)
	} `mapstructure:"signing"`
	// Headers go on every request to the service; ${VAR} in a value is
	// replaced from the environment, as in credentials.
	Headers        map[string]string `mapstructure:"headers"`
	Credentials    Credentials       `mapstructure:"credentials"`
	SizeLimitBytes int64             `mapstructure:"size_limit_bytes"` // the whole bundle decompressed (and so each file); default 32 MiB
}

func setBundleDefaults(v *viper.Viper) { setBundleDefaultsAt(v, "policy.bundle") }

// setBundleDefaultsAt sets the defaults of a bundle section at key
// (policy.bundle, policy.shadow.bundle).
func setBundleDefaultsAt(v *viper.Viper, key string) {
	v.SetDefault(key+".url", "")
	v.SetDefault(key+".resource", policybundle.DefaultResource)
	v.SetDefault(key+".polling.min_delay", policybundle.DefaultMinDelay.String())
	v.SetDefault(key+".polling.max_delay", policybundle.DefaultMaxDelay.String())
	v.SetDefault(key+".polling.long_polling_timeout", "0s")
	v.SetDefault(key+".signing.public_key", "")
	v.SetDefault(key+".signing.key_id", policybundle.DefaultKeyID)
	v.SetDefault(key+".signing.algorithm", "")
	v.SetDefault(key+".signing.scope", "")
	v.SetDefault(key+".headers", map[string]any{})
	v.SetDefault(key+".credentials.bearer.token", "")
	v.SetDefault(key+".size_limit_bytes", policybundle.DefaultSizeLimitBytes)
}

// EngineBundle is the engine's view of policy.bundle, nil when off, with
// ${VAR} in its headers and token read from the environment. Unset
// variables are an error for serve and check; an operator's command
// (strict false) decides with the persisted bundle and needs no
// credentials, so for it they stay empty.
func (b Bundle) EngineBundle(stateDir string, strict bool) (*policybundle.Config, error) {
	return b.engineBundle("policy.bundle", stateDir, strict)
}

// engineBundle is EngineBundle for the bundle section at key.
func (b Bundle) engineBundle(key, stateDir string, strict bool) (*policybundle.Config, error) {
	c := b.config(stateDir)
	if c == nil {
		return nil, nil
	}
	var err error
	c.Headers, c.BearerToken, err = ExpandService(key, c.Headers, c.BearerToken)
	if err != nil && strict {
		return nil, err
	}
	return c, nil
}

// config is policy.bundle as written, nil when off.
func (b Bundle) config(stateDir string) *policybundle.Config {
	if b.URL == "" {
		return nil
	}
	return &policybundle.Config{
		URL: b.URL, Resource: b.Resource, MinDelay: b.Polling.MinDelay, MaxDelay: b.Polling.MaxDelay,
		LongPollingTimeout: b.Polling.LongPollingTimeout,
		PublicKeyFile:      b.Signing.PublicKey, KeyID: b.Signing.KeyID, Algorithm: b.Signing.Algorithm, Scope: b.Signing.Scope,
		Headers: b.Headers, BearerToken: b.Credentials.Bearer.Token, SizeLimitBytes: b.SizeLimitBytes, StateDir: stateDir,
	}
}

// verify names the first problem with policy.bundle, when it is on.
func (b Bundle) verify(bad func(string, string, ...any)) { b.verifyAt("policy.bundle", bad) }

// verifyAt is verify for the bundle section at key.
func (b Bundle) verifyAt(key string, bad func(string, string, ...any)) {
	if b.URL == "" {
		return
	}
	if err := b.config("").Verify(); err != nil {
		bad(key, "%v", err)
	}
	verifyServiceHeaders(bad, key+".headers", b.Headers)
}
