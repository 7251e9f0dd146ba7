package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// The values below are written with their members out of name order, as
// a sender may: a decoder that fills maps would send them on sorted.
const (
	// orderedSchema is a form, and a tool's input schema.
	orderedSchema = `{"type":"object","properties":{"zeta":{"type":"string","title":"Z"},"alpha":{"title":"A","type":"string"}},"required":["zeta"]}`
	// hostContent is a form's answer as the host wrote it; the Go SDK
	// host encodes its map sorted (sortedContent), and the test's host
	// transport writes it back in this order.
	hostContent   = `"content":{"zeta":"z","alpha":"a"}`
	sortedContent = `"content":{"alpha":"a","zeta":"z"}`
)

// orderCases are what crosses in each era cell, with what the host and
// the upstream must read of it byte for byte.
var orderCases = []struct {
	name string
	// legacyTool and modernTool push params (base64) to the host, on a
	// legacy and on a 2026-07-28 upstream session.
	legacyTool, modernTool string
	args                   map[string]any
	params                 string
	host                   []string // what the host reads, each in its frames
	upstream               []string // what the upstream reads, each in its frames
	approve                bool     // the request is held for review: the test approves it
	edit                   string   // with approve, the operator's edit it is approved with
}{
	{name: "form", legacyTool: "ask", modernTool: "ask_input", args: map[string]any{"method": "elicitation/create"},
		params:   `{"mode":"form","message":"Who?","requestedSchema":` + orderedSchema + `}`,
		host:     []string{`"requestedSchema":` + orderedSchema},
		upstream: []string{hostContent}},
	{name: "sampling", legacyTool: "sample_raw", modernTool: "sample_input_raw",
		params: `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],"maxTokens":10,` +
			`"metadata":{"zeta":1,"alpha":{"y":1,"b":2}},"tools":[{"name":"lookup","inputSchema":` + orderedSchema + `}]}`,
		host: []string{`{"role":"user","content":{"type":"text","text":"hello"}}`, `"metadata":{"zeta":1,"alpha":{"y":1,"b":2}}`,
			`"inputSchema":` + orderedSchema}, approve: true},
	// The edit is written in the SDK's order, as the edit document shows
	// it, changes one text and reorders the metadata: every other member
	// reaches the host as the upstream wrote it, the metadata as edited.
	{name: "sampling-edited", legacyTool: "sample_raw", modernTool: "sample_input_raw",
		params: `{"messages":[{"role":"user","content":{"text":"hello","annotations":{"priority":0.5},"type":"text"}}],` +
			`"maxTokens":10,"systemPrompt":"be brief","metadata":{"zeta":1,"alpha":2},"tools":[{"name":"lookup","inputSchema":` + orderedSchema + `}]}`,
		edit: `{"maxTokens":10,"messages":[{"content":{"type":"text","text":"edited","annotations":{"priority":0.5}},"role":"user"}],` +
			`"metadata":{"alpha":2,"zeta":1},"systemPrompt":"be brief","tools":[{"inputSchema":` + orderedSchema + `,"name":"lookup"}]}`,
		host: []string{`"messages":[{"role":"user","content":{"text":"edited","annotations":{"priority":0.5},"type":"text"}}],` +
			`"maxTokens":10,"systemPrompt":"be brief","metadata":{"alpha":2,"zeta":1},"tools":[{"name":"lookup","inputSchema":` + orderedSchema + `}]`},
		approve: true},
}

// TestShapeKeptAcrossEras: in every era cell, over stdio and over HTTP,
// what the firewall relays keeps its sender's member order: a form's
// schema and a sampling request's messages, tools and metadata reach the
// host as the upstream wrote them, the host's answer to a form reaches the
// upstream as the host wrote it, and the tools the upstream lists reach
// the host with their schemas as written.
func TestShapeKeptAcrossEras(t *testing.T) {
	cells := []eraCell{
		{"legacy-upstream/legacy-host", "2025-11-25", "legacy"},
		{"2026-upstream/legacy-host", "2025-11-25", modernEra},
		{"2026-upstream/2026-host", modernEra, ""},
		{"legacy-upstream/2026-host", modernEra, "legacy"},
	}
	for _, overHTTP := range []bool{false, true} {
		for _, cell := range cells {
			if overHTTP {
				cell.name = "http/" + cell.name
			}
			shapeCell(t, overHTTP, cell)
		}
	}
}

// eraCell is a host's era and an upstream's protocol setting.
type eraCell struct{ name, host, protocol string }

// shapeCell runs orderCases and the tools list in one era cell.
func shapeCell(t *testing.T, overHTTP bool, cell eraCell) {
	for _, tc := range orderCases {
		t.Run(cell.name+"/"+tc.name, func(t *testing.T) {
			wire := filepath.Join(t.TempDir(), "wire")
			p := newTestProxy(t, "peer")
			p.cfg.Upstreams[0].Era = cell.protocol
			p.cfg.Upstreams[0].Env = map[string]string{"MCPXFW_PEER_WIRE": wire}
			rec := &recorder{}
			host := orderConnect(t, p, overHTTP, cell.host, rec)
			tool := tc.legacyTool
			if cell.protocol != "legacy" {
				tool = tc.modernTool
			}
			args := map[string]any{"raw_b64": base64.StdEncoding.EncodeToString([]byte(tc.params))}
			for k, v := range tc.args {
				args[k] = v
			}
			if tc.approve {
				go func() {
					if err := approveCase(p, pendingID(t, p.store), tc.edit); err != nil {
						t.Error(err)
					}
				}()
			}
			res, err := host.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", tool, err, res)
			}
			for _, want := range tc.host {
				if !strings.Contains(rec.String(), want) {
					t.Errorf("the host read\n%s\nwant it to hold %s", rec.String(), want)
				}
			}
			got, _ := os.ReadFile(wire)
			for _, want := range tc.upstream {
				if !bytes.Contains(got, []byte(want)) {
					t.Errorf("the upstream read\n%s\nwant it to hold %s", got, want)
				}
			}
		})
	}
	t.Run(cell.name+"/tools", func(t *testing.T) {
		p := newTestProxy(t, "peer")
		p.cfg.Upstreams[0].Era = cell.protocol
		rec := &recorder{}
		host := orderConnect(t, p, overHTTP, cell.host, rec)
		if _, err := host.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		// The peer's progress tool, as it lists it.
		want := `"inputSchema":{"type":"object","properties":{"steps":{"type":"integer"},"hold":{"type":"string"},"tokens":{"type":"array"}}}`
		if !strings.Contains(rec.String(), want) {
			t.Errorf("the host read\n%s\nwant it to hold %s", rec.String(), want)
		}
	})
}

// approveCase approves the held request id as alice, with edit when
// there is one.
func approveCase(p *Proxy, id, edit string) error {
	var err error
	if edit == "" {
		_, err = p.store.Approve(context.Background(), id, "alice", "")
	} else {
		_, err = p.store.ApproveEdited(context.Background(), id, "alice", "", review.Edit{Value: json.RawMessage(edit)})
	}
	return err
}

// orderConnect connects orderHost to p at era, over stdio or over HTTP,
// through an orderTransport.
func orderConnect(t *testing.T, p *Proxy, overHTTP bool, era string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, orderHost())
	wrap := func(tr mcp.Transport) mcp.Transport { return &orderTransport{Transport: tr, rec: rec} }
	if !overHTTP {
		return connectClient(t, p, era, client, wrap)
	}
	cs, err := client.Connect(t.Context(), wrap(&mcp.StreamableClientTransport{Endpoint: serveHTTPTest(t, p), MaxRetries: -1}),
		&mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// orderHost declares sampling with tools and form elicitation, and
// answers every form with zeta and alpha.
func orderHost() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model",
				Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"zeta": "z", "alpha": "a"}}, nil
		},
	}
}

// orderTransport records what the host reads, and writes the host's
// answers to a form in hostContent's order, as a host that keeps its
// form's order would: the Go SDK host can only write them sorted.
type orderTransport struct {
	mcp.Transport
	rec *recorder
}

func (t *orderTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &orderConn{recordingConn{Connection: c, rec: t.rec}}, nil
}

type orderConn struct {
	recordingConn
}

func (c *orderConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	swap := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(sortedContent), []byte(hostContent)) }
	switch m := msg.(type) {
	case *jsonrpc.Response:
		out := *m
		out.Result = swap(m.Result)
		msg = &out
	case *jsonrpc.Request:
		out := *m
		out.Params = swap(m.Params)
		msg = &out
	}
	return c.recordingConn.Write(ctx, msg)
}
