package main

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/logship"
)

// dlogServiceStopTimeout bounds how long stopping serve waits for the
// service sink's last upload: the plugin retries until then, and events
// still buffered are lost, and counted.
const dlogServiceStopTimeout = 5 * time.Second

// startDecisionLogService starts the service sink if one is configured;
// nil when none is.
func startDecisionLogService(ctx context.Context, s config.DecisionLogService, log *zap.Logger) (*logship.Shipper, error) {
	if s.URL == "" {
		return nil, nil
	}
	headers, token, err := config.ExpandService("decision_log.service", s.Headers, s.Credentials.Bearer.Token)
	if err != nil {
		return nil, err
	}
	ship, err := logship.Start(ctx, logship.Config{
		URL: s.URL, Resource: s.Resource, BufferEvents: s.BufferSizeLimitEvents,
		MinDelay: s.MinDelay, MaxDelay: s.MaxDelay, Headers: headers, BearerToken: token,
		Labels: map[string]string{"app": "mcpx-fw"},
	}, log)
	if err != nil {
		return nil, fmt.Errorf("decision_log.service: %w", err)
	}
	log.Info("decision log service sink on", zap.String("resource", s.Resource))
	return ship, nil
}
