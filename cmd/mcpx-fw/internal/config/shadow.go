package config

import (
	"time"

	"github.com/spf13/viper"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
)

// Shadow is policy.shadow: a candidate policy judged beside the active
// one at every decision, recorded (decision log, metrics, status) and
// never enforced. Promoting it is moving its dir or bundle to policy.dir
// or policy.bundle.
type Shadow struct {
	// Dir is a policy folder, relative to the config file, loaded and
	// watched as policy.dir is; "" (default) and no bundle: no shadow.
	Dir string `mapstructure:"dir"`
	// Timeout bounds one shadow evaluation; default 250ms, policy.timeout's
	// default: a candidate must decide within the deadline it will have
	// once promoted, and one that does not is reported as timing out.
	Timeout time.Duration `mapstructure:"timeout"`
	// Bundle is the shadow from a bundle service, keys as policy.bundle;
	// its last good bundle is kept in <state_dir>/bundles/mcpxfw-shadow/.
	Bundle Bundle `mapstructure:"bundle"`
}

// On reports whether a shadow policy is configured.
func (s Shadow) On() bool { return s.Dir != "" || s.Bundle.URL != "" }

func setShadowDefaults(v *viper.Viper) {
	v.SetDefault("policy.shadow.dir", "")
	v.SetDefault("policy.shadow.timeout", "250ms")
	setBundleDefaultsAt(v, "policy.shadow.bundle")
}

// EngineBundle is the engine's view of policy.shadow.bundle, nil when
// off, as Bundle.EngineBundle, kept under its own name in the state dir.
func (s Shadow) EngineBundle(stateDir string, strict bool) (*policybundle.Config, error) {
	c, err := s.Bundle.engineBundle("policy.shadow.bundle", stateDir, strict)
	if c != nil {
		c.Bundle = policybundle.ShadowName
	}
	return c, err
}

// verify names the problems with policy.shadow.
func (s Shadow) verify(bad func(string, string, ...any)) {
	if s.Dir != "" && s.Bundle.URL != "" {
		bad("policy.shadow", "names both dir and bundle.url; a shadow is one candidate policy, from one of them")
	}
	positive(bad, "policy.shadow.timeout", s.Timeout)
	s.Bundle.verifyAt("policy.shadow.bundle", bad)
}
