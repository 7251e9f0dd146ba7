package policybundle

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/rest"
)

// Source is one bundle service resource and the state-dir copy of the
// last bundle the engine activated from it.
type Source struct {
	cfg    Config
	client rest.Client
	vc     *bundle.VerificationConfig
}

// Update is what one download attempt brought: a verified bundle and its
// bytes, nothing (the server's copy is unchanged), or a failure.
type Update struct {
	Bundle  *bundle.Bundle // nil unless a new bundle arrived and verified
	Raw     []byte         // Bundle's bytes as served, for Persist
	ETag    string
	Err     error
	Failure Failure // what kind of failure Err is
}

// New checks cfg and builds OPA's service client for it. OPA's own log
// lines are dropped: the engine logs one line per change of state instead
// of one per failed poll.
func New(cfg Config) (*Source, error) {
	if err := cfg.Verify(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	vc, err := cfg.verification()
	if err != nil {
		return nil, err
	}
	raw, err := cfg.restConfig()
	if err != nil {
		return nil, err
	}
	auth, err := newBoundedAuth(raw, cfg.SizeLimitBytes)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	client, err := rest.New(withAuthPlugin(raw), nil, rest.Logger(logging.NewNoOpLogger()),
		rest.AuthPluginLookup(func(name string) rest.HTTPAuthPlugin {
			if name == boundedAuthName {
				return auth
			}
			return nil
		}))
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	return &Source{cfg: cfg, client: client, vc: vc}, nil
}

// Location is the bundle's full URL as status and the log show it: no
// password, no query value (shownURL).
func (s *Source) Location() string { return shownURL(location(s.cfg.URL, s.cfg.Resource)) }

// Fetch downloads the bundle once, now: start-up's path when no bundle
// was persisted. When ctx ends first, OPA's attempt may still be running:
// its update is taken through a channel, never a shared variable.
func (s *Source) Fetch(ctx context.Context) Update {
	manual := plugins.TriggerManual
	got := make(chan Update, 1)
	d, err := s.downloader(download.Config{Trigger: &manual}, func(_ context.Context, u Update) { got <- u })
	if err != nil {
		return Update{Err: err, Failure: FailDownload}
	}
	err = d.Trigger(ctx)
	select {
	case u := <-got:
		return u
	default: // ctx ended first
		if err == nil {
			err = ctx.Err()
		}
		return Update{Err: scrubbed(err), Failure: FailDownload}
	}
}

// Start polls the service in the background until ctx ends, calling f
// with every update (one at a time). etag is the ETag of the bundle
// deciding now, so an unchanged bundle is not downloaded again. done
// closes once polling has stopped: OPA's Downloader runs on a context of
// its own, and its Stop returns after the update under way, if any, has
// been handled.
func (s *Source) Start(ctx context.Context, etag string, f func(context.Context, Update)) (done <-chan struct{}, err error) {
	dc, err := s.cfg.downloadConfig()
	if err != nil {
		return nil, err
	}
	d, err := s.downloader(dc, f)
	if err != nil {
		return nil, err
	}
	d.SetCache(etag)
	d.Start(ctx)
	stopped := make(chan struct{})
	context.AfterFunc(ctx, func() {
		defer close(stopped)
		d.Stop(context.Background())
	})
	return stopped, nil
}

// downloader is OPA's Downloader for the resource, verifying with the
// configured key, bounding every file's size and keeping the raw bytes
// (persistence on) so the engine can store what it activated.
func (s *Source) downloader(dc download.Config, f func(context.Context, Update)) (*download.Downloader, error) {
	if err := dc.ValidateAndInjectDefaults(); err != nil {
		return nil, err
	}
	d := download.New(dc, s.client, s.cfg.Resource).
		WithBundleVerificationConfig(s.vc).
		WithSizeLimitBytes(s.cfg.SizeLimitBytes).
		WithBundlePersistence(true).
		WithBundleName(Name).
		WithBundleParserOpts(ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
	return d.WithCallback(func(ctx context.Context, u download.Update) error {
		if ctx.Err() != nil {
			return nil // stopping: the download was cancelled, the service did not fail
		}
		f(ctx, s.update(u))
		return nil
	}), nil
}

// update turns OPA's update into ours.
func (s *Source) update(u download.Update) Update {
	if u.Error != nil {
		return Update{Err: scrubbed(u.Error), Failure: classify(u.Error, s.vc != nil)}
	}
	out := Update{Bundle: u.Bundle, ETag: u.ETag}
	if u.Bundle != nil && u.Raw != nil {
		raw, err := io.ReadAll(u.Raw)
		if err != nil {
			return Update{Err: err, Failure: FailDownload}
		}
		out.Raw = raw
	}
	return out
}

// read reads and verifies a bundle from raw exactly as a download is
// read, within the same whole-bundle bound.
func (s *Source) read(raw []byte) (*bundle.Bundle, error) {
	if err := checkSize(raw, s.cfg.SizeLimitBytes); err != nil {
		return nil, err
	}
	b, err := bundle.NewReader(bytes.NewReader(raw)).
		WithBundleVerificationConfig(s.vc).
		WithSizeLimitBytes(s.cfg.SizeLimitBytes).
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotations(true).
		WithBundleName(Name).
		Read()
	if err != nil {
		return nil, err
	}
	return &b, nil
}
