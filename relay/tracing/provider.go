// Package tracing builds the OpenTelemetry tracer provider mcpx-fw exports
// its spans with, and reads W3C trace context from an MCP request's _meta
// (SEP-414: the keys traceparent and tracestate, as the OpenTelemetry
// semantic conventions for MCP carry them). Only cmd builds a provider and
// shuts it down; the relay is handed a trace.Tracer, nil when tracing is
// off, so no span is started and nothing is allocated for one.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config is how spans leave the process (tracing.* in the config file).
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL; "" turns tracing off. A URL
	// without a path gets OTLP's /v1/traces.
	Endpoint string
	// Headers go on every export request (a collector's credentials).
	Headers map[string]string
	// Insecure allows an http:// endpoint: spans then cross the network in
	// clear, which the operator must ask for.
	Insecure bool
	// SampleRatio is the share of new traces recorded; a trace the host
	// started keeps the host's sampling decision.
	SampleRatio float64
	// Version is reported as service.version.
	Version string
}

// serviceName is the service.name of every span, unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise.
const serviceName = "mcpx-fw"

// exportTimeout bounds one export request, so a collector that hangs
// cannot hold spans (or the shutdown's flush) for OTLP's default 10s.
const exportTimeout = 5 * time.Second

// New builds the provider for cfg, or nil when tracing is off. The
// exporter sends batches in the background; Shutdown flushes them.
func New(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	if cfg.Endpoint == "" {
		return nil, nil
	}
	endpoint, err := CheckEndpoint(cfg.Endpoint, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	exp, err := otlptrace.New(ctx, newOTLPClient(endpoint, cfg.Headers))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", serviceName),
		attribute.String("service.version", cfg.Version)), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
		sdktrace.WithRawSpanLimits(spanLimits())), nil
}

// spanLimits bound what one span may carry. The firewall's spans hold a
// handful of its own attributes; the limits are a backstop, so no span
// grows with anything a policy or a peer could repeat.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	l.AttributeValueLengthLimit = 256
	l.AttributeCountLimit = 32
	l.EventCountLimit = 16
	l.LinkCountLimit = 4
	l.AttributePerEventCountLimit = 8
	l.AttributePerLinkCountLimit = 4
	return l
}

// CheckEndpoint is the export URL for endpoint: an https:// URL, or an
// http:// one when insecure allows it, with /v1/traces when it names no
// path.
func CheckEndpoint(endpoint string, insecure bool) (string, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return "", fmt.Errorf("tracing.otlp.endpoint: %q is not an http:// or https:// URL such as https://collector:4318/v1/traces", endpoint)
	case u.Scheme == "http" && !insecure:
		return "", errors.New("tracing.otlp.endpoint: an http:// endpoint sends spans in clear; set tracing.otlp.insecure: true to allow it")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}
