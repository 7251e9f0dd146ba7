package config

import (
	"strings"

	"github.com/spf13/viper"

	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// Tracing is tracing.*: OpenTelemetry spans per decision, exported
// over OTLP/HTTP (docs/operations.md, Traces). Off unless an endpoint is set.
type Tracing struct {
	// SampleRatio is the share of new traces recorded (0..1); a trace the
	// host started keeps the host's sampling decision. Default 1.
	SampleRatio float64 `mapstructure:"sample_ratio"`
	OTLP        struct {
		// Endpoint is the collector's OTLP/HTTP traces URL; "" (the
		// default) turns tracing off.
		Endpoint string `mapstructure:"endpoint"`
		// Headers go on every export; ${VAR} in a value is read from the
		// environment, as servers.<name>.headers.
		Headers map[string]string `mapstructure:"headers"`
		// Insecure allows an http:// endpoint. Default false.
		Insecure bool `mapstructure:"insecure"`
	} `mapstructure:"otlp"`
}

func setTracingDefaults(v *viper.Viper) {
	v.SetDefault("tracing.sample_ratio", 1.0)
	v.SetDefault("tracing.otlp.endpoint", "")
	v.SetDefault("tracing.otlp.headers", map[string]string{})
	v.SetDefault("tracing.otlp.insecure", false)
}

func (c Tracing) verify(bad func(string, string, ...any)) {
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		bad("tracing.sample_ratio", "must be between 0 and 1")
	}
	// verifyURL first: CheckEndpoint's message quotes the endpoint, which
	// may carry credentials
	if c.OTLP.Endpoint != "" && verifyURL(bad, "tracing.otlp.endpoint", c.OTLP.Endpoint, "https://collector:4318/v1/traces") {
		if _, err := tracing.CheckEndpoint(c.OTLP.Endpoint, c.OTLP.Insecure); err != nil {
			bad("tracing.otlp.endpoint", "%s", strings.TrimPrefix(err.Error(), "tracing.otlp.endpoint: "))
		}
	}
	verifyServiceHeaders(bad, "tracing.otlp.headers", c.OTLP.Headers)
}

// Headers is tracing.otlp.headers with ${VAR} read from the environment.
// serve and check read them; the operator's commands export no spans and
// need none of the variables.
func (c Tracing) Headers() (map[string]string, error) {
	return expandHeaderValues("tracing.otlp.headers.", c.OTLP.Headers)
}
