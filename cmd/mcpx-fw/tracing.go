package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/viper"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// TracingConfig is tracing.*: OpenTelemetry spans per decision, exported
// over OTLP/HTTP (README, Traces). Off unless an endpoint is set.
type TracingConfig struct {
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

func (c TracingConfig) check(bad func(string, string, ...any)) {
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		bad("tracing.sample_ratio", "must be between 0 and 1")
	}
	if c.OTLP.Endpoint != "" {
		if _, err := tracing.CheckEndpoint(c.OTLP.Endpoint, c.OTLP.Insecure); err != nil {
			bad("tracing.otlp.endpoint", "%v", err)
		}
	}
	checkServiceHeaders(bad, "tracing.otlp.headers", c.OTLP.Headers)
}

// headers is tracing.otlp.headers with ${VAR} read from the environment.
// serve and check read them; the operator's commands export no spans and
// need none of the variables.
func (c TracingConfig) headers() (map[string]string, error) {
	return expandHeaderValues("tracing.otlp.headers.", c.OTLP.Headers)
}

// startTracing builds the tracer provider tracing.* asks for and returns
// the relay's tracer (nil when tracing is off) and the shutdown that
// flushes the spans still batched; serve calls it on the way out.
func startTracing(ctx context.Context, rt *runtime) (trace.Tracer, func(), error) {
	c := rt.cfg.Tracing
	headers, err := c.headers()
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", displayPath(rt.cfg.path), err)
	}
	tp, err := tracing.New(ctx, tracing.Config{Endpoint: c.OTLP.Endpoint, Headers: headers, Insecure: c.OTLP.Insecure,
		SampleRatio: c.SampleRatio, Version: version})
	if err != nil || tp == nil {
		return nil, func() {}, err
	}
	rt.log.Info("tracing on", zap.String("endpoint", c.OTLP.Endpoint), zap.Float64("sample_ratio", c.SampleRatio))
	return tp.Tracer("github.com/mcpx-fw/mcpx-fw"), func() { flushTracing(ctx, tp, rt.log) }, nil
}

// flushTracing shuts tp down, sending what it still holds, within a few
// seconds even when serve was stopped by a signal (ctx is done by then).
func flushTracing(ctx context.Context, tp *sdktrace.TracerProvider, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not all exported on exit", zap.Error(err))
	}
}
