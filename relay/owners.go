package relay

import (
	"context"
	"errors"
	"iter"
	"regexp"
	"slices"
	"sync"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
	"go.uber.org/zap"
)

// Resources keep their URIs when several upstreams share a host, so a URI
// does not say which server it belongs to. Trying each server in turn
// would hand one server's reads (and the URIs themselves: file paths,
// account names) to every server configured before it. Instead each link
// keeps an index of what every upstream listed, and a request about a URI
// goes to the one upstream that claims it, or to none.
//
// An upstream claims a URI when it listed that exact URI
// (resources/list), listed a resource template whose text is that URI, or
// listed a template that matches it (RFC 6570, matched as the SDK matches
// its own templates). The rules:
//
//   - One claimant: the request goes to it, and only to it.
//   - Several claimants, whatever the kind of claim: the request is refused
//     (refusal.ResourceClaimedTwice) and reaches nobody. Any server can list any
//     URI or a template that matches everything, so the firewall cannot
//     tell the rightful owner from an impostor; preferring exact listings
//     would let a server take another's templated URIs by listing them,
//     preferring the more specific template would let it take them with a
//     narrower template. A refusal costs availability, names the servers
//     (the operator's labels), and sends nothing to either.
//   - No claimant: every upstream is listed again (the URI may come from a
//     tool result, or from a list that changed) and the lookup repeats;
//     still none is the spec's resource-not-found, and nobody was asked.
//
// The index is filled by the host's own resources/list and
// resources/templates/list through the firewall, and by the lookups
// themselves: a lookup decides only over every upstream's current
// listing, so an upstream whose part is missing (never listed, or dropped
// by its list_changed) is listed first. A part that cannot be listed
// fails the lookup (refusal.ResourceOwnersUnknown) rather than letting another
// server become the only claimant. The index belongs to a link, so each
// host session that initialized has its own, and every 2026-07-28 request
// shares the modern link's.
//
// Bounded: per upstream, at most maxIndexedResources URIs and
// maxIndexedTemplates templates (each at most maxTemplateLength bytes)
// are listed, indexed and shown to the host; the rest of a longer list is
// not read, not shown, and logged, so a server that lists a million
// resources costs no more than one that lists the cap. A URI past the cap
// is not found, as the host was never shown it.
const (
	// maxListings bounds how often one lookup lists the parts it misses.
	maxListings         = 3
	maxIndexedResources = 10_000
	maxIndexedTemplates = 1_000
	maxTemplateLength   = 1 << 10
)

// resourceIndex is what each upstream of one link claims.
type resourceIndex struct {
	mu    sync.Mutex
	parts map[*upstream]*claims
	// generation counts complete relistings, so that of the lookups that
	// found nothing at the same time one relists and the others reuse it.
	generation uint64
	// relisting serialises relistings: a flood of unknown URIs costs one
	// listing of each upstream at a time, not one per request.
	relisting sync.Mutex
}

// claims is one upstream's part; a nil field was never listed or has been
// dropped since.
type claims struct {
	uris      map[string]struct{}
	templates []claimedTemplate
}

type claimedTemplate struct {
	text  string
	match *regexp.Regexp // the template as the SDK matches its own
}

func (c *claims) known() bool { return c != nil && c.uris != nil && c.templates != nil }

// claimsURI reports whether c claims uri (see the rules above).
func (c *claims) claimsURI(uri string) bool {
	if _, ok := c.uris[uri]; ok {
		return true
	}
	for _, t := range c.templates {
		if t.text == uri || t.match.MatchString(uri) {
			return true
		}
	}
	return false
}

func (ix *resourceIndex) part(u *upstream) *claims {
	if ix.parts == nil {
		ix.parts = map[*upstream]*claims{}
	}
	if ix.parts[u] == nil {
		ix.parts[u] = &claims{}
	}
	return ix.parts[u]
}

// setResources replaces the URIs u claims.
func (ix *resourceIndex) setResources(u *upstream, rs []*mcp.Resource) {
	uris := make(map[string]struct{}, len(rs))
	for _, r := range rs {
		uris[r.URI] = struct{}{}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.part(u).uris = uris
}

// setTemplates replaces the templates u claims. A template that does not
// parse claims nothing.
func (ix *resourceIndex) setTemplates(u *upstream, ts []*mcp.ResourceTemplate) {
	out := make([]claimedTemplate, 0, len(ts))
	for _, t := range ts {
		if re := templateRegexp(t.URITemplate); re != nil {
			out = append(out, claimedTemplate{text: t.URITemplate, match: re})
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.part(u).templates = out
}

// templateRegexp is what the SDK matches a URI against for a template
// (uritemplate's Regexp, built once here), or nil for text that is no
// template. Regexp compiles with MustCompile; the text is an upstream's, so
// a panic there is taken as "no template" rather than let it stop serve.
func templateRegexp(text string) (re *regexp.Regexp) {
	tmpl, err := uritemplate.New(text)
	if err != nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			re = nil
		}
	}()
	return tmpl.Regexp()
}

// forget drops u's part, after its list changed.
func (ix *resourceIndex) forget(u *upstream) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	delete(ix.parts, u)
}

// lookup lists the claimants of uri among ups, and the upstreams whose
// part is missing.
func (ix *resourceIndex) lookup(ups []*upstream, uri string) (owners, missing []*upstream, generation uint64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, u := range ups {
		c := ix.parts[u]
		switch {
		case !c.known():
			missing = append(missing, u)
		case c.claimsURI(uri):
			owners = append(owners, u)
		}
	}
	return owners, missing, ix.generation
}

// owner is the one upstream that claims uri (see the rules above). With a
// single upstream there is nothing to choose and no index: it is that one.
func (p *Proxy) owner(ctx context.Context, l *link, uri string) (*upstream, error) {
	if u, ok := l.only(); ok {
		return u, nil
	}
	ups := l.offering(hasResources)
	relisted := false
	for listed := 0; ; {
		owners, missing, generation := l.resources.lookup(ups, uri)
		switch {
		case len(missing) > 0 && listed == maxListings:
			// Parts dropped again as soon as listed: list_changed without end.
			return nil, p.ownersUnknown(missing[0], errors.New("its list kept changing while it was read"))
		case len(missing) > 0:
			if err := p.listClaims(ctx, l, missing); err != nil {
				return nil, err
			}
			listed++
			continue
		case len(owners) == 1:
			return owners[0], nil
		case len(owners) > 1:
			return nil, refusal.ResourceClaimedTwice(serverNames(owners))
		case relisted:
			return nil, refusal.ResourceNotFound()
		}
		if err := p.relist(ctx, l, ups, generation); err != nil {
			return nil, err
		}
		relisted = true
	}
}

// relist lists every upstream again, unless another lookup did so since
// generation was read.
func (p *Proxy) relist(ctx context.Context, l *link, ups []*upstream, generation uint64) error {
	ix := &l.resources
	ix.relisting.Lock()
	defer ix.relisting.Unlock()
	ix.mu.Lock()
	done := ix.generation != generation
	ix.mu.Unlock()
	if done {
		return nil
	}
	if err := p.listClaims(ctx, l, ups); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.generation++
	ix.mu.Unlock()
	return nil
}

// listClaims lists the resources and templates of each of ups into l's
// index.
func (p *Proxy) listClaims(ctx context.Context, l *link, ups []*upstream) error {
	for _, u := range ups {
		if _, err := p.listResourcesOf(ctx, l, u); err != nil {
			return p.ownersUnknown(u, err)
		}
		if _, err := p.listTemplatesOf(ctx, l, u); err != nil {
			return p.ownersUnknown(u, err)
		}
	}
	return nil
}

// listResourcesOf lists u's resources, up to the cap, and indexes them as
// u's claims.
func (p *Proxy) listResourcesOf(ctx context.Context, l *link, u *upstream) ([]*mcp.Resource, error) {
	rs, err := listCapped(ctx, p, u, (*mcp.ClientSession).Resources, maxIndexedResources)
	if err != nil {
		return nil, err
	}
	l.resources.setResources(u, rs)
	return rs, nil
}

// listTemplatesOf lists u's resource templates, up to the cap and without
// those too long to index, and indexes them as u's claims. An upstream
// without resources/templates/list has none.
func (p *Proxy) listTemplatesOf(ctx context.Context, l *link, u *upstream) ([]*mcp.ResourceTemplate, error) {
	ts, err := listCapped(ctx, p, u, (*mcp.ClientSession).ResourceTemplates, maxIndexedTemplates)
	if isMethodNotFound(err) {
		ts, err = []*mcp.ResourceTemplate{}, nil
	}
	if err != nil {
		return nil, err
	}
	ts = keepTemplates(p, u, ts)
	l.resources.setTemplates(u, ts)
	return ts, nil
}

func (p *Proxy) ownersUnknown(u *upstream, err error) error {
	p.log.Warn("resource owners unknown: an upstream's resources could not be listed",
		zap.String("server", u.cfg.Name), zap.Error(err))
	return refusal.ResourceOwnersUnknown(u.cfg.Name)
}

// listCapped lists up to limit items of one kind from u, and stops reading
// there (so further pages are never fetched); past the limit it logs.
func listCapped[P any, T any](ctx context.Context, p *Proxy, u *upstream,
	all func(*mcp.ClientSession, context.Context, P) iter.Seq2[*T, error], limit int) ([]*T, error) {
	out := []*T{}
	var none P
	for item, err := range all(u.session, ctx, none) {
		if err != nil {
			return nil, err
		}
		if limit > 0 && len(out) == limit {
			p.log.Warn("list truncated: an upstream listed more than the firewall indexes; the rest is not shown or reachable",
				zap.String("server", u.cfg.Name), zap.Int("kept", limit))
			break
		}
		out = append(out, item)
	}
	return out, nil
}

// keepTemplates drops templates too long to index, so that what the host
// is shown is what the firewall can route.
func keepTemplates(p *Proxy, u *upstream, ts []*mcp.ResourceTemplate) []*mcp.ResourceTemplate {
	out := make([]*mcp.ResourceTemplate, 0, len(ts))
	for _, t := range ts {
		if len(t.URITemplate) > maxTemplateLength {
			p.log.Warn("resource template dropped: longer than the firewall indexes",
				zap.String("server", u.cfg.Name), zap.Int("bytes", len(t.URITemplate)))
			continue
		}
		out = append(out, t)
	}
	return out
}

// isMethodNotFound reports an upstream that has resources but no
// templates/list: it claims no templates.
func isMethodNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

func serverNames(ups []*upstream) []string {
	names := make([]string, len(ups))
	for i, u := range ups {
		names[i] = u.cfg.Name
	}
	slices.Sort(names)
	return names
}

// byName is the upstream configured as name, or nil.
func (l *link) byName(name string) *upstream {
	for _, u := range l.upstreamList() {
		if u.cfg.Name == name {
			return u
		}
	}
	return nil
}
