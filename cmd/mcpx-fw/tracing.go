package main

import (
	"context"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/tracing"
)

// startTracing builds the tracer provider tracing.* asks for and returns
// the relay's tracer (nil when tracing is off) and the shutdown that
// flushes the spans still batched; serve calls it on the way out.
func startTracing(ctx context.Context, rt *runtime) (trace.Tracer, func(), error) {
	c := rt.cfg.Tracing
	headers, err := c.Headers()
	if err != nil {
		return nil, nil, rt.cfg.Placed(err)
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
