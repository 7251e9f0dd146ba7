package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpClient sends batches to an OTLP/HTTP traces endpoint as the SDK's
// otlptracehttp exporter does (protobuf, gzip, the configured headers,
// 429, 502, 503 and 504 tried again, honouring Retry-After, within the
// export's deadline). It replaces that exporter for its imports: through
// its configuration package and the collector's service definitions it
// links gRPC, and gRPC links golang.org/x/net/trace, whose debug pages run
// templates; a binary that can run a template keeps every exported method
// of every type, and serve's binary was megabytes larger, resident in
// every serve whether tracing is on or not.
type otlpClient struct {
	endpoint string
	headers  map[string]string
	client   *http.Client
}

// newOTLPClient sends to endpoint (CheckEndpoint's URL) with headers. It
// follows no redirect: the headers carry a collector's credentials.
func newOTLPClient(endpoint string, headers map[string]string) *otlpClient {
	return &otlpClient{endpoint: endpoint, headers: headers, client: &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

func (c *otlpClient) Start(context.Context) error { return nil }

func (c *otlpClient) Stop(context.Context) error {
	c.client.CloseIdleConnections()
	return nil
}

// UploadTraces sends one batch, trying again while the collector says it
// is busy, until exportTimeout.
func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, exportTimeout)
	defer cancel()
	wait := retryWait
	for {
		again, err := c.send(ctx, body)
		if again == 0 {
			return err
		}
		if again < 0 {
			again, wait = wait, min(2*wait, maxRetryWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-time.After(again):
		}
	}
}

// retryWait is the first wait before trying a busy collector again,
// doubled each time up to maxRetryWait.
const (
	retryWait    = 250 * time.Millisecond
	maxRetryWait = 2 * time.Second
)

// send posts body once. again is 0 when the export is over (err says how
// it ended), the collector's Retry-After when it gave one, else -1 for a
// failure worth trying again.
func (c *otlpClient) send(ctx context.Context, body []byte) (again time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := c.client.Do(req)
	if err != nil {
		return -1, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		err = fmt.Errorf("traces export: collector answered %d", resp.StatusCode)
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return -1, err
	}
	return 0, fmt.Errorf("traces export: collector answered %d", resp.StatusCode)
}

// exportRequest is the gzipped ExportTraceServiceRequest holding spans:
// field 1 (resource_spans), one length-delimited ResourceSpans each.
func exportRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var msg []byte
	for _, rs := range spans {
		m, err := proto.Marshal(rs)
		if err != nil {
			return nil, fmt.Errorf("traces export: %w", err)
		}
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendBytes(msg, m)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write(msg)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
