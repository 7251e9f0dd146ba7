package policybundle

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/download"
)

// Failure is what kind of failure a download attempt ended in; the engine
// counts each kind apart (its Reload* words).
type Failure string

const (
	// FailDownload: the bundle did not arrive whole: the service was
	// unreachable, answered an error status, or the stream broke off.
	FailDownload Failure = "download"
	// FailVerify: the bundle arrived but OPA refused it while checking
	// its signature or the files' digests (or it carried none while a
	// key is configured).
	FailVerify Failure = "verify"
	// FailRead: the bundle verified (or needs no signature) but OPA could
	// not read it: a module that does not parse, malformed data.
	FailRead Failure = "read"
)

// classify sorts an error from OPA's Downloader or reader by type. OPA's
// reader checks signatures and digests before it parses anything, and
// reports those refusals as plain errors; parse failures come typed
// (ast.Errors, JSON errors). So a plain error from the reader is a
// verification failure when a key is configured, and a read failure
// otherwise (then only manifest problems remain).
func classify(err error, keyed bool) Failure {
	var status download.HTTPError
	var urlErr *url.Error
	var netErr net.Error
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var parse ast.Errors
	switch {
	case errors.As(err, &status), errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum),
		errors.Is(err, tar.ErrHeader):
		return FailDownload
	case errors.As(err, &parse), errors.As(err, &syntax), errors.As(err, &typeErr):
		return FailRead
	case keyed:
		return FailVerify
	}
	return FailRead
}
