package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// memServer is an upstream with the given resources and templates,
// reached through a real SDK session over in-memory transports.
type memServer struct {
	name      string
	resources []string
	templates []string
}

// memLink is a link to one upstream per server, as a host that
// initialized would have.
func memLink(t *testing.T, servers ...memServer) (*link, map[string]*mcp.Server) {
	t.Helper()
	l := newLink(hostView{era: "2025-11-25"})
	srvs := map[string]*mcp.Server{}
	for _, s := range servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: s.name, Version: "1"}, nil)
		read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: s.name}}}, nil
		}
		for _, uri := range s.resources {
			srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, read)
		}
		for _, tmpl := range s.templates {
			srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: tmpl, Name: tmpl}, read)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 2025-11-25: a 2026-07-28 client caches lists until the server's
		// own list_changed arrives, which these tests do not wait for.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw", Version: "test"}, nil).Connect(t.Context(), ct,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close(); _ = ss.Close() })
		l.upstreams = append(l.upstreams, &upstream{cfg: Upstream{Name: s.name}, link: l, session: cs, inFlight: map[*hostCall]struct{}{}})
		srvs[s.name] = srv
	}
	return l, srvs
}

func routingProxy() *Proxy {
	return &Proxy{log: zap.NewNop(), sealer: seal.New(sealKey(nil), nil), srv: mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)}
}

// TestOwnerRules: a request about a URI goes to the one server that lists
// it or a template matching it; two claimants, of any kind, is a refusal
// naming both; none is resource-not-found.
func TestOwnerRules(t *testing.T) {
	l, _ := memLink(t,
		memServer{name: "alpha", resources: []string{"file:///a/key", "both://x", "file:///b/docs/listed"},
			templates: []string{"alpha://items/{id}", "any://{+rest}"}},
		memServer{name: "beta", resources: []string{"both://x", "any://beta"}, templates: []string{"file:///b/docs/{name}"}},
	)
	p := routingProxy()
	cases := []struct {
		uri       string
		want      string // owner, or the error's message fragment
		wantError bool
	}{
		{uri: "file:///a/key", want: "alpha"},
		{uri: "alpha://items/7", want: "alpha"},
		{uri: "alpha://items/{id}", want: "alpha"}, // a template's own text (completion refs)
		{uri: "file:///b/docs/plan", want: "beta"},
		{uri: "both://x", want: "servers alpha, beta", wantError: true},
		// An exact listing does not take a URI another server's template covers...
		{uri: "file:///b/docs/listed", want: "servers alpha, beta", wantError: true},
		// ...nor does a catch-all template take another server's listed URI.
		{uri: "any://beta", want: "servers alpha, beta", wantError: true},
		{uri: "file:///etc/shadow", want: "Resource not found", wantError: true},
	}
	for _, c := range cases {
		u, err := p.owner(t.Context(), l, c.uri)
		var we *jsonrpc.Error
		switch {
		case c.wantError && (!errors.As(err, &we) || we.Code != refusal.CodeInvalidParams || !strings.Contains(we.Message, c.want)):
			t.Errorf("owner(%s) = %v, %v; want -32602 saying %q", c.uri, u, err, c.want)
		case !c.wantError && (err != nil || u.cfg.Name != c.want):
			t.Errorf("owner(%s) = %v, %v; want %s", c.uri, u, err, c.want)
		}
	}
}

// TestOwnerFollowsListChanges: after a server's list changes (its part is
// dropped, as its list_changed does), a URI that moved is found on the
// server that lists it now, and the old owner is never asked for it.
func TestOwnerFollowsListChanges(t *testing.T) {
	l, srvs := memLink(t, memServer{name: "alpha", resources: []string{"x://moving"}}, memServer{name: "beta", resources: []string{"x://b"}})
	p := routingProxy()
	if u, err := p.owner(t.Context(), l, "x://moving"); err != nil || u.cfg.Name != "alpha" {
		t.Fatalf("owner before the move = %v, %v", u, err)
	}
	srvs["alpha"].RemoveResources("x://moving")
	srvs["beta"].AddResource(&mcp.Resource{URI: "x://moving", Name: "moving"}, nil)
	p.resourcesChanged(t.Context(), l.upstreams[0], nil)
	if u, err := p.owner(t.Context(), l, "x://moving"); err != nil || u.cfg.Name != "beta" {
		t.Fatalf("owner after alpha's list changed = %v, %v; want beta", u, err)
	}
}

// TestResourceIndexBounded: a server that lists more than the cap has the
// cap listed, indexed and shown; further pages are not read, and a URI
// past the cap is not found (the host was never shown it).
func TestResourceIndexBounded(t *testing.T) {
	many := make([]string, maxIndexedResources+1)
	for i := range many {
		many[i] = fmt.Sprintf("many://%06d", i)
	}
	l, _ := memLink(t, memServer{name: "big", resources: many}, memServer{name: "small", resources: []string{"small://one"}})
	p := routingProxy()
	res, err := p.listResources(t.Context(), l, &mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.(*mcp.ListResourcesResult).Resources); got != maxIndexedResources+1 {
		t.Errorf("host shown %d resources, want the cap %d from big plus small's one", got, maxIndexedResources)
	}
	if u, err := p.owner(t.Context(), l, many[maxIndexedResources-1]); err != nil || u.cfg.Name != "big" {
		t.Errorf("the last URI under the cap: %v, %v; want big", u, err)
	}
	var we *jsonrpc.Error
	if _, err := p.owner(t.Context(), l, many[maxIndexedResources]); !errors.As(err, &we) || we.Message != "Resource not found" {
		t.Errorf("the URI past the cap: %v, want Resource not found", err)
	}
}

// TestReadRetryRoutesBySealedServer: a 2026-07-28 host's retry of a read
// goes to the server its sealed requestState names, decided before
// anything is sent; a state that is not the firewall's goes nowhere.
func TestReadRetryRoutesBySealedServer(t *testing.T) {
	l, _ := memLink(t, memServer{name: "alpha", resources: []string{"x://a"}}, memServer{name: "beta", resources: []string{"x://b"}})
	p := routingProxy()
	seal := func(server string) string {
		s, err := p.sealer.Seal(seal.Continuation{Server: server, Call: seal.CallDigest("resources/read", "x://a", nil), Expires: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	u, err := p.readTarget(t.Context(), l, &mcp.ReadResourceParams{URI: "x://a", RequestState: seal("beta")})
	if err != nil || u.cfg.Name != "beta" {
		t.Errorf("retry sealed for beta went to %v, %v", u, err)
	}
	for name, state := range map[string]string{
		"tampered":         seal("alpha") + "x",
		"for no such link": seal("gamma"),
		"not sealed":       "eyJzcnYiOiJhbHBoYSJ9.AAAA",
	} {
		var we *jsonrpc.Error
		if u, err := p.readTarget(t.Context(), l, &mcp.ReadResourceParams{URI: "x://a", RequestState: state}); !errors.As(err, &we) || we.Code != refusal.CodeInvalidParams {
			t.Errorf("%s state: %v, %v; want -32602", name, u, err)
		}
	}
}
