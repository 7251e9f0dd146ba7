package policybundle

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/open-policy-agent/opa/v1/plugins/rest"
	"github.com/open-policy-agent/opa/v1/util"
)

// OPA's reader bounds each file of a bundle (WithSizeLimitBytes) but not
// their number, and keeps every file in memory before it checks the
// signature; the Downloader also keeps the whole compressed stream for
// persistence. A tar of many files each just under the limit, or a gzip
// bomb of them, would so fill memory with bytes nobody has verified yet.
// The service's responses are therefore bounded as a whole before OPA
// reads them: at most SizeLimitBytes once decompressed, and the
// compressed stream at most compressedBound of that.

// errTooLarge refuses a bundle past the whole-bundle bound.
var errTooLarge = errors.New("bundle too large")

// compressedBound is the most compressed bytes read for a bundle of at
// most limit bytes decompressed: gzip's stored blocks add a few bytes per
// 64 KiB, so incompressible content still fits.
func compressedBound(limit int64) int64 { return limit + limit/64 + 64<<10 }

// checkSize refuses raw, a gzip'd bundle, when it decompresses past limit
// bytes. Bytes that are not gzip are left for OPA's reader to refuse.
func checkSize(raw []byte, limit int64) error {
	if int64(len(raw)) > compressedBound(limit) {
		return fmt.Errorf("%w: more than %d bytes compressed (size_limit_bytes %d)", errTooLarge, compressedBound(limit), limit)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, limit+1))
	if n > limit {
		return fmt.Errorf("%w: more than size_limit_bytes (%d bytes) decompressed", errTooLarge, limit)
	}
	return nil
}

// boundedAuthName names boundedAuth as the service's credentials plugin:
// OPA's rest client takes a custom http.Client only from one.
const boundedAuthName = "mcpxfw-bounded"

// boundedAuth is OPA's own auth plugin for the configured credentials
// (bearer, or none), its client's transport wrapped in boundedTransport.
type boundedAuth struct {
	inner rest.HTTPAuthPlugin
	limit int64
}

// newBoundedAuth builds the auth plugin OPA would pick for svc, a
// services entry as restConfig writes it.
func newBoundedAuth(svc []byte, limit int64) (*boundedAuth, error) {
	var c rest.Config
	if err := util.Unmarshal(svc, &c); err != nil {
		return nil, err
	}
	inner, err := c.AuthPlugin(nil)
	if err != nil {
		return nil, err
	}
	return &boundedAuth{inner: inner, limit: limit}, nil
}

func (a *boundedAuth) NewClient(c rest.Config) (*http.Client, error) {
	hc, err := a.inner.NewClient(c)
	if err != nil {
		return nil, err
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = boundedTransport{base: base, limit: a.limit}
	return hc, nil
}

func (a *boundedAuth) Prepare(r *http.Request) error { return a.inner.Prepare(r) }

// boundedTransport reads a bundle response whole, within the bounds,
// before OPA sees it; a response past them is an error of the request, so
// the download fails and nothing of it is parsed.
type boundedTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, compressedBound(t.limit)+1))
	if err == nil {
		err = checkSize(raw, t.limit)
	}
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, nil
}

// withAuthPlugin is svc, a services entry as restConfig writes it, with
// its credentials named boundedAuthName, which wraps them.
func withAuthPlugin(svc []byte) []byte {
	var m map[string]any
	_ = util.Unmarshal(svc, &m) // restConfig's own JSON
	m["credentials"] = map[string]any{"plugin": boundedAuthName}
	out, _ := json.Marshal(m)
	return out
}
