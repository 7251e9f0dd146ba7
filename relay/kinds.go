package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// kind is what differs between the requests an upstream makes of the host
// (DESIGN §2a): sampling, elicitation, roots. Everything else of the
// pipeline (validate, decide, wait for a review, answer, check, record) is
// shared and reads the kind only through this table. The SDK's types stay
// behind it: the pipeline holds a request as an mcp.InputRequest and an
// answer as an mcp.InputResponse, in the one type per kind named here.
type kind struct {
	name engine.Kind
	// method is the request an upstream sends for it, as a legacy push
	// and as the method of a 2026-07-28 input request entry.
	method string
	// capability is the client capability a host declares to answer it.
	capability string
	// decides says the request stage runs a decision. A roots request
	// carries nothing to judge: only the host's list is decided, at the
	// result stage (DESIGN §2a).
	decides bool
	// operatorAnswers says an operator may write the answer in place of
	// the host (servers.<name>.operator_answer): a completion only; a
	// user's form answers and roots are the user's.
	operatorAnswers bool
	// declared reports whether h can answer it.
	declared func(h hostView) bool
	// forwardable is the request as it goes to the host: the upstream's
	// _meta dropped, anything the SDK would infer made explicit, so the
	// bytes judged are the bytes forwarded.
	forwardable func(mcp.InputRequest) mcp.InputRequest
	// newRequest and newResult are empty values to decode an operator's
	// edit of a request or of an answer into.
	newRequest func() mcp.InputRequest
	newResult  func() mcp.InputResponse
	// answer reads what a host sent as the kind's one result type, with
	// its _meta dropped; false when it is not an answer of this kind.
	answer func(mcp.InputResponse) (mcp.InputResponse, bool)
	// ask asks a host older than 2026-07-28 by push.
	ask func(ctx context.Context, host *mcp.ServerSession, params mcp.InputRequest) (mcp.InputResponse, error)
}

var (
	samplingKind = &kind{
		name: engine.KindSampling, method: methodCreateMessage, capability: "sampling", decides: true, operatorAnswers: true,
		declared:    hostView.canSample,
		forwardable: func(in mcp.InputRequest) mcp.InputRequest { return forwardable(in.(*mcp.CreateMessageWithToolsParams)) },
		newRequest:  func() mcp.InputRequest { return new(mcp.CreateMessageWithToolsParams) },
		newResult:   func() mcp.InputResponse { return new(mcp.CreateMessageWithToolsResult) },
		answer: func(a mcp.InputResponse) (mcp.InputResponse, bool) {
			r, err := samplingAnswer(a)
			return r, err == nil
		},
		ask: func(ctx context.Context, host *mcp.ServerSession, params mcp.InputRequest) (mcp.InputResponse, error) {
			res, err := host.CreateMessageWithTools(ctx, params.(*mcp.CreateMessageWithToolsParams))
			if err != nil {
				return nil, err
			}
			return &mcp.CreateMessageWithToolsResult{Role: res.Role, Content: res.Content, Model: res.Model, StopReason: res.StopReason}, nil
		},
	}
	elicitationKind = &kind{
		name: engine.KindElicitation, method: methodElicit, capability: "elicitation", decides: true,
		declared:    func(h hostView) bool { return h.caps != nil && h.caps.Elicitation != nil },
		forwardable: func(in mcp.InputRequest) mcp.InputRequest { return forwardableElicit(in.(*mcp.ElicitParams)) },
		newRequest:  func() mcp.InputRequest { return new(mcp.ElicitParams) },
		newResult:   func() mcp.InputResponse { return new(mcp.ElicitResult) },
		answer: func(a mcp.InputResponse) (mcp.InputResponse, bool) {
			r, ok := a.(*mcp.ElicitResult)
			if !ok || r == nil {
				return nil, false
			}
			return &mcp.ElicitResult{Action: r.Action, Content: r.Content}, true
		},
		ask: func(ctx context.Context, host *mcp.ServerSession, params mcp.InputRequest) (mcp.InputResponse, error) {
			res, err := elicitHost(ctx, host, params.(*mcp.ElicitParams))
			if err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: res.Action, Content: res.Content}, nil
		},
	}
	rootsKind = &kind{
		name: engine.KindRoots, method: methodListRoots, capability: "roots",
		declared:    func(h hostView) bool { return h.caps != nil && h.caps.RootsV2 != nil },
		forwardable: func(mcp.InputRequest) mcp.InputRequest { return &mcp.ListRootsParams{} },
		newRequest:  func() mcp.InputRequest { return new(mcp.ListRootsParams) },
		newResult:   func() mcp.InputResponse { return new(mcp.ListRootsResult) },
		answer: func(a mcp.InputResponse) (mcp.InputResponse, bool) {
			r, ok := a.(*mcp.ListRootsResult)
			if !ok || r == nil {
				return nil, false
			}
			return &mcp.ListRootsResult{Roots: r.Roots}, true
		},
		ask: func(ctx context.Context, host *mcp.ServerSession, _ mcp.InputRequest) (mcp.InputResponse, error) {
			res, err := host.ListRoots(ctx, &mcp.ListRootsParams{})
			if err != nil {
				return nil, err
			}
			return &mcp.ListRootsResult{Roots: res.Roots}, nil
		},
	}
)

// kinds is every kind of request the firewall relays to a host for an
// upstream. Whatever is listed here is admitted (package admit) before
// anything else is done with it, by push or as an input request entry
// (relayedKind, admitRound): a kind added here cannot reach a host
// uncounted.
var kinds = []*kind{samplingKind, elicitationKind, rootsKind}

// relayedKind is the kind of the request an upstream sends as method, nil
// for a method the firewall relays to no host (the SDK answers those).
func relayedKind(method string) *kind {
	for _, k := range kinds {
		if k.method == method {
			return k
		}
	}
	return nil
}

// kindOf is the kind of an input request, nil for one the firewall does
// not know.
func kindOf(in mcp.InputRequest) *kind {
	switch in.(type) {
	case *mcp.CreateMessageWithToolsParams:
		return samplingKind
	case *mcp.ElicitParams:
		return elicitationKind
	case *mcp.ListRootsParams:
		return rootsKind
	}
	return nil
}

// forwardableElicit is an elicitation as it goes to the host: _meta
// dropped, and the mode the SDK would infer (url when a URL or an
// elicitationId is set, else form) written out, so the host and the
// policy read the same mode (urlMode reads it too).
func forwardableElicit(in *mcp.ElicitParams) *mcp.ElicitParams {
	out := *in
	out.Meta = nil
	if out.Mode == "" {
		out.Mode = "form"
		if out.URL != "" || out.ElicitationID != "" {
			out.Mode = "url"
		}
	}
	return &out
}

// canonical is an operator's edit or answer as the relay will forward it:
// decoded into the kind's SDK type and encoded again, so the bytes the
// engine judges are the bytes that go out (as forwardable does for
// requests). An operator's edit of an elicitation is an ElicitParams.
func (k *kind) canonical(stage engine.Stage, raw []byte) ([]byte, error) {
	var v any = k.newResult()
	if stage == engine.StageRequest {
		v = k.newRequest()
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	if in, ok := v.(mcp.InputRequest); ok {
		v = k.forwardable(in)
	}
	return json.Marshal(v)
}

// decodeRequest reads canonical request bytes back into the kind's type.
func (k *kind) decodeRequest(raw []byte) (mcp.InputRequest, error) {
	in := k.newRequest()
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	return in, nil
}

// decodeResult reads canonical result bytes back into the kind's type.
func (k *kind) decodeResult(raw []byte) (mcp.InputResponse, error) {
	res := k.newResult()
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// keyPrefix names the input-request keys the firewall mints for the kind
// (a bridged call's pushes).
func (k *kind) keyPrefix(round, i int) string {
	return fmt.Sprintf("%s-%d-%d", k.name, round, i)
}

// narrowRoots leaves out of a host's roots every one outside allow
// (servers.<name>.roots.allow): a root is kept when its URI is a prefix
// itself, or continues one at a path boundary ("file:///repo" keeps
// "file:///repo/src", never "file:///repo-secrets"). Empty allow keeps
// the list as it is.
func narrowRoots(res *mcp.ListRootsResult, allow []string) *mcp.ListRootsResult {
	if len(allow) == 0 || res == nil {
		return res
	}
	out := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	for _, r := range res.Roots {
		if r != nil && rootAllowed(r.URI, allow) {
			out.Roots = append(out.Roots, r)
		}
	}
	return out
}

func rootAllowed(uri string, allow []string) bool {
	for _, prefix := range allow {
		if prefix == "" {
			continue
		}
		rest, ok := strings.CutPrefix(uri, prefix)
		if ok && (rest == "" || strings.HasSuffix(prefix, "/") || strings.HasPrefix(rest, "/")) {
			return true
		}
	}
	return false
}
