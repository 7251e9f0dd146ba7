package relay

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRootsInputWithoutParams: a 2026-07-28 upstream's roots/list input
// request without params (valid; mcp-go and the TypeScript SDK v2 send it)
// is answered with the host's roots, from a stdio or an HTTP upstream, for
// a legacy host (asked by push) and a 2026-07-28 one (handed the request),
// instead of failing the host's call as an unreadable result.
func TestRootsInputWithoutParams(t *testing.T) {
	for _, reach := range []string{"stdio", "http"} {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			for _, bare := range []bool{true, false} {
				name := reach + "/" + era + "/with params"
				if bare {
					name = reach + "/" + era + "/bare"
				}
				t.Run(name, func(t *testing.T) {
					p := newTestProxy(t, "peer")
					if reach == "http" {
						p.cfg.Upstreams[0] = defaultOffers(Upstream{Name: "peer", Label: "test peer", URL: startHTTPUpstream(t)})
					}
					p.cfg.Upstreams[0].Era = "2026-07-28"
					client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"},
						&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}})
					client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
					host := connectClient(t, p, era, client)
					res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots_input", Arguments: map[string]any{"bare": bare}})
					if err != nil {
						t.Fatal(err)
					}
					var got mcp.ListRootsResult
					if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
						t.Fatalf("%v: %s", err, res.Content[0].(*mcp.TextContent).Text)
					}
					if len(got.Roots) != 1 || got.Roots[0].URI != "file:///work" {
						t.Errorf("upstream got roots %+v, want the host's file:///work", got.Roots)
					}
				})
			}
		}
	}
}

// TestWithRootsParams: only roots/list entries without params change, read
// as the SDK reads them; everything else stays byte for byte, and what
// comes out is a result the SDK decodes.
func TestWithRootsParams(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" = unchanged
	}{
		{"bare", `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s"}`,
			`{"resultType":"input_required","inputRequests":{"r":{"params":{},"method":"roots/list"}},"requestState":"s"}`},
		{"spaces", `{ "inputRequests" : { "r" : { "method" : "roots/list" } } }`,
			`{"inputRequests":{"r":{"params":{}, "method" : "roots/list" }}}`},
		{"escaped method", `{"inputRequests":{"r":{"method":"roots\/list"}}}`, `{"inputRequests":{"r":{"params":{},"method":"roots\/list"}}}`},
		{"method in another case", `{"inputRequests":{"r":{"METHOD":"roots/list"}}}`, `{"inputRequests":{"r":{"params":{},"METHOD":"roots/list"}}}`},
		{"beside others", `{"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m"}},"r":{"method":"roots/list"}}}`,
			`{"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m"}},"r":{"params":{},"method":"roots/list"}}}`},
		{"with params", `{"inputRequests":{"r":{"method":"roots/list","params":{}}}}`, ""},
		{"params null", `{"inputRequests":{"r":{"method":"roots/list","params":null}}}`, ""},
		{"params in another case", `{"inputRequests":{"r":{"method":"roots/list","Params":{}}}}`, ""},
		{"other method", `{"inputRequests":{"r":{"method":"elicitation/create"}}}`, ""},
		{"no input requests", `{"content":[{"type":"text","text":"roots/list"}]}`, ""},
		{"differently cased member", `{"InputRequests":{"r":{"method":"roots/list"}}}`, ""},
		{"not JSON", `{"inputRequests":{"r":{"method":"roots/list"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withRootsParams(json.RawMessage(tc.in))
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if got == nil {
				return
			}
			var res mcp.CallToolResult
			if err := json.Unmarshal(got, &res); err != nil {
				t.Fatalf("the SDK cannot read it: %v", err)
			}
			if _, ok := res.InputRequests["r"].(*mcp.ListRootsParams); !ok {
				t.Errorf("entry r decoded as %T", res.InputRequests["r"])
			}
		})
	}
}

// FuzzWithRootsParams: whatever an upstream sends, what the guard makes of
// it is JSON, with nothing left out: as many members (params added).
func FuzzWithRootsParams(f *testing.F) {
	f.Add([]byte(`{"inputRequests":{"r":{"method":"roots/list"}}}`))
	f.Add([]byte(`{"inputRequests":{"r":{"method":"roots/list"},"r":{"method":"roots/list","params":{}}},"inputRequests":{}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := withRootsParams(in)
		if out == nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON from %q: %q", in, out)
		}
		if n, m := bytes.Count(in, []byte(":")), bytes.Count(out, []byte(":")); m < n {
			t.Fatalf("%q has fewer members than %q", out, in)
		}
	})
}
