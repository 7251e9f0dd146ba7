package config

import (
	"strings"
	"time"

	"github.com/spf13/viper"
)

// DecisionLogService is decision_log.service: the service sink,
// OPA's decision-log plugin uploading the same masked events the file sink
// writes. Its keys are OPA's own (services and decision_logs config) where
// OPA has one.
type DecisionLogService struct {
	URL      string `mapstructure:"url"`      // the service's base URL; "" = off
	Resource string `mapstructure:"resource"` // the path uploads go to; default /logs
	// BufferSizeLimitEvents bounds the events waiting to be uploaded; the
	// oldest are dropped and counted beyond it. Default 10000.
	BufferSizeLimitEvents int64 `mapstructure:"buffer_size_limit_events"`
	// MinDelay and MaxDelay bound the pause between uploads, in whole
	// seconds; defaults 5m and 10m, OPA's.
	MinDelay time.Duration `mapstructure:"min_delay"`
	MaxDelay time.Duration `mapstructure:"max_delay"`
	// Headers go on every upload; ${VAR} in a value is replaced from
	// serve's environment when it starts.
	Headers     map[string]string `mapstructure:"headers"`
	Credentials Credentials       `mapstructure:"credentials"`
}

// setDecisionLogServiceDefaults sets OPA's own decision-log defaults: its
// event buffer's 10000 events, uploads 5 to 10 minutes apart, /logs.
func setDecisionLogServiceDefaults(v *viper.Viper) {
	v.SetDefault("decision_log.service.url", "")
	v.SetDefault("decision_log.service.resource", "/logs")
	v.SetDefault("decision_log.service.buffer_size_limit_events", 10000)
	v.SetDefault("decision_log.service.min_delay", "5m")
	v.SetDefault("decision_log.service.max_delay", "10m")
	v.SetDefault("decision_log.service.headers", map[string]string{})
	v.SetDefault("decision_log.service.credentials.bearer.token", "")
}

// verify reports what is wrong with the service sink's keys.
func (s DecisionLogService) verify(bad func(string, string, ...any)) {
	const key = "decision_log.service."
	if s.URL == "" {
		return
	}
	verifyURL(bad, key+"url", s.URL, "https://logs.example.com")
	if !strings.HasPrefix(s.Resource, "/") {
		bad(key+"resource", "want a path starting with /, such as /logs")
	}
	if s.BufferSizeLimitEvents <= 0 {
		bad(key+"buffer_size_limit_events", "must be at least 1")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"min_delay", s.MinDelay}, {"max_delay", s.MaxDelay}} {
		if d.v < time.Second || d.v%time.Second != 0 {
			bad(key+d.name, "must be whole seconds, at least 1s, as OPA's plugin counts them")
		}
	}
	if s.MaxDelay < s.MinDelay {
		bad(key+"max_delay", "must not be shorter than min_delay")
	}
	verifyServiceHeaders(bad, key+"headers", s.Headers)
}
