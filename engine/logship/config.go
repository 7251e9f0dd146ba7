package logship

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Config is the service sink: where events go and how the plugin buffers
// and paces them. Its zero values are OPA's defaults.
type Config struct {
	URL      string // the service's base URL
	Resource string // the path events are POSTed to; "" is OPA's /logs
	// BufferEvents bounds the events waiting to be uploaded; the oldest
	// are dropped (and counted) beyond it. 0: OPA's 10000.
	BufferEvents int64
	// MinDelay and MaxDelay bound the pause between uploads (each picked
	// at random between them), in whole seconds as OPA counts them.
	// Zero both: OPA's 300s and 600s.
	MinDelay, MaxDelay time.Duration
	Headers            map[string]string // sent with every upload
	BearerToken        string            // "": none
	// Labels are the manager's labels, which the plugin puts on every
	// event; OPA adds id (InstanceID) and version (OPA's).
	Labels map[string]string
	// InstanceID identifies this process in labels.id; "": a random one,
	// as OPA makes for each of its processes.
	InstanceID string
}

// serviceName names the one service in the manager's config.
const serviceName = "mcpxfw-decision-logs"

// managerConfig is cfg as OPA's config file would say it: one service,
// the labels, and decision_logs using the event buffer (see
// reportingConfig).
func (c Config) managerConfig() ([]byte, error) {
	if c.URL == "" {
		return nil, errors.New("decision_log.service.url is empty")
	}
	service := map[string]any{"url": c.URL, "headers": c.Headers}
	if c.BearerToken != "" {
		service["credentials"] = map[string]any{"bearer": map[string]any{"token": c.BearerToken}}
	}
	dl := map[string]any{"service": serviceName, "reporting": c.reportingConfig()}
	if c.Resource != "" {
		dl["resource"] = c.Resource
	}
	return json.Marshal(map[string]any{
		"services":      map[string]any{serviceName: service},
		"labels":        c.Labels,
		"decision_logs": dl,
	})
}

// reportingConfig chooses the plugin's event buffer: it is bounded in
// events and drops one event at a time, counting each, so a lost event
// is a counted event; and taking an event only queues it, while the size
// buffer encodes and compresses each event on the deciding goroutine.
func (c Config) reportingConfig() map[string]any {
	r := map[string]any{"buffer_type": "event"}
	if c.BufferEvents > 0 {
		r["buffer_size_limit_events"] = c.BufferEvents
	}
	if c.MinDelay > 0 || c.MaxDelay > 0 {
		r["min_delay_seconds"] = int64(c.MinDelay / time.Second)
		r["max_delay_seconds"] = int64(c.MaxDelay / time.Second)
	}
	return r
}

func (c Config) instanceID() string {
	if c.InstanceID != "" {
		return c.InstanceID
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcpxfw-" + hex.EncodeToString(b[:])
}
