package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/engine"
)

// Kind is what differs between the requests an upstream makes of the host:
// sampling, elicitation, roots. Everything else of the pipeline (validate,
// decide, wait for a review, answer, check, record) is shared and reads
// the kind only through this table. The SDK's types stay behind it: the
// pipeline holds a request as an mcp.InputRequest and an answer as an
// mcp.InputResponse, in the one type per kind named here.
type Kind struct {
	Name engine.Kind
	// Method is the request an upstream sends for it, as a legacy push
	// and as the method of a 2026-07-28 input request entry.
	Method string
	// Capability is the client capability a host declares to answer it.
	Capability string
	// decides says the request stage runs a decision. A roots request
	// carries nothing to judge: only the host's list is decided, at the
	// result stage.
	decides bool
	// operatorAnswers says an operator may write the answer in place of
	// the host (servers.<name>.operator_answer): a completion only; a
	// user's form answers and roots are the user's.
	operatorAnswers bool
	// declared reports whether a host that declared caps can answer it.
	declared func(caps *mcp.ClientCapabilities) bool
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
}

// The methods of the requests an upstream makes of the host.
const (
	MethodCreateMessage = "sampling/createMessage"
	MethodElicit        = "elicitation/create"
	MethodListRoots     = "roots/list"
)

// The kinds.
var (
	Sampling = &Kind{
		Name: engine.KindSampling, Method: MethodCreateMessage, Capability: "sampling", decides: true, operatorAnswers: true,
		declared:    func(c *mcp.ClientCapabilities) bool { return c != nil && c.Sampling != nil },
		forwardable: func(in mcp.InputRequest) mcp.InputRequest { return forwardable(in.(*mcp.CreateMessageWithToolsParams)) },
		newRequest:  func() mcp.InputRequest { return new(mcp.CreateMessageWithToolsParams) },
		newResult:   func() mcp.InputResponse { return new(mcp.CreateMessageWithToolsResult) },
		answer: func(a mcp.InputResponse) (mcp.InputResponse, bool) {
			r, err := samplingAnswer(a)
			return r, err == nil
		},
	}
	Elicitation = &Kind{
		Name: engine.KindElicitation, Method: MethodElicit, Capability: "elicitation", decides: true,
		declared:    func(c *mcp.ClientCapabilities) bool { return c != nil && c.Elicitation != nil },
		forwardable: func(in mcp.InputRequest) mcp.InputRequest { return ForwardableElicit(in.(*mcp.ElicitParams)) },
		newRequest:  func() mcp.InputRequest { return new(mcp.ElicitParams) },
		newResult:   func() mcp.InputResponse { return new(mcp.ElicitResult) },
		answer: func(a mcp.InputResponse) (mcp.InputResponse, bool) {
			r, ok := a.(*mcp.ElicitResult)
			if !ok || r == nil {
				return nil, false
			}
			return &mcp.ElicitResult{Action: r.Action, Content: r.Content}, true
		},
	}
	Roots = &Kind{
		Name: engine.KindRoots, Method: MethodListRoots, Capability: "roots",
		declared:    func(c *mcp.ClientCapabilities) bool { return c != nil && c.RootsV2 != nil },
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
	}
)

// Declared reports whether a host that declared caps can answer k.
func (k *Kind) Declared(caps *mcp.ClientCapabilities) bool { return k.declared(caps) }

// Decides reports whether k's request stage runs a decision (roots' does
// not: only the host's list is decided).
func (k *Kind) Decides() bool { return k.decides }

// OperatorAnswers reports whether an operator may write k's answer in
// place of the host, where the server allows it.
func (k *Kind) OperatorAnswers() bool { return k.operatorAnswers }

// Forwardable is in as it goes to the host (see Kind).
func (k *Kind) Forwardable(in mcp.InputRequest) mcp.InputRequest { return k.forwardable(in) }

// Answer reads what a host sent as k's one result type, with its _meta
// dropped; false when it is not an answer of this kind.
func (k *Kind) Answer(a mcp.InputResponse) (mcp.InputResponse, bool) { return k.answer(a) }

// Kinds is every kind of request the firewall relays to a host for an
// upstream. Whatever is listed here is admitted (package admit) before
// anything else is done with it, by push or as an input request entry
// (the relay's guard and its rounds): a kind added here cannot reach a
// host uncounted.
var Kinds = []*Kind{Sampling, Elicitation, Roots}

// Relayed is the kind of the request an upstream sends as method, nil for
// a method the firewall relays to no host (the SDK answers those).
func Relayed(method string) *Kind {
	for _, k := range Kinds {
		if k.Method == method {
			return k
		}
	}
	return nil
}

// Of is the kind of an input request, nil for one the firewall does not
// know.
func Of(in mcp.InputRequest) *Kind {
	switch in.(type) {
	case *mcp.CreateMessageWithToolsParams:
		return Sampling
	case *mcp.ElicitParams:
		return Elicitation
	case *mcp.ListRootsParams:
		return Roots
	}
	return nil
}

// Named is the kind called name, nil for none.
func Named(name engine.Kind) *Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// ForwardableElicit is an elicitation as it goes to the host: _meta
// dropped, and the mode the SDK would infer (url when a URL or an
// elicitationId is set, else form) written out, so the host and the
// policy read the same mode (the relay's urlMode reads it too).
func ForwardableElicit(in *mcp.ElicitParams) *mcp.ElicitParams {
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
func (k *Kind) canonical(stage engine.Stage, raw []byte) ([]byte, error) {
	var v any = k.newResult()
	if stage == engine.StageRequest {
		v = k.newRequest()
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	if in, ok := v.(mcp.InputRequest); ok {
		v = k.forwardable(InOrderOf(in, raw))
	}
	return json.Marshal(v)
}

// decodeRequest reads canonical request bytes back into the kind's type,
// its free-form values in the order the bytes have them (InOrderOf).
func (k *Kind) decodeRequest(raw []byte) (mcp.InputRequest, error) {
	in := k.newRequest()
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	return InOrderOf(in, raw), nil
}

// decodeResult reads canonical result bytes back into the kind's type.
func (k *Kind) decodeResult(raw []byte) (mcp.InputResponse, error) {
	res := k.newResult()
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// KeyPrefix names the input-request keys the firewall mints for the kind
// (a bridged call's pushes).
func (k *Kind) KeyPrefix(round, i int) string {
	return fmt.Sprintf("%s-%d-%d", k.Name, round, i)
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

// forwardable is the request as it will be sent to the host: the upstream's
// _meta (progress tokens, protocol keys) describes its own hop and is
// dropped, so the bytes validated are exactly the bytes forwarded.
func forwardable(in *mcp.CreateMessageWithToolsParams) *mcp.CreateMessageWithToolsParams {
	out := *in
	out.Meta = nil
	return &out
}

// samplingAnswer reads a host's completion in the SDK's one result type.
func samplingAnswer(answer mcp.InputResponse) (*mcp.CreateMessageWithToolsResult, error) {
	switch r := answer.(type) {
	case *mcp.CreateMessageWithToolsResult:
		return &mcp.CreateMessageWithToolsResult{Role: r.Role, Content: r.Content, Model: r.Model, StopReason: r.StopReason}, nil
	case *mcp.CreateMessageResult:
		return &mcp.CreateMessageWithToolsResult{Role: r.Role, Content: []mcp.Content{r.Content}, Model: r.Model, StopReason: r.StopReason}, nil
	}
	return nil, fmt.Errorf("not a sampling result (%T)", answer)
}
