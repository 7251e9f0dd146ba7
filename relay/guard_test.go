package relay

import (
	"testing"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestMayNeedInput: the pre-check lets no spelling of input_required past.
func TestMayNeedInput(t *testing.T) {
	for _, tc := range []struct {
		result string
		want   bool
	}{
		{`{"resultType":"input_required","inputRequests":{}}`, true},
		{`{"resultType":"input\u005frequired","inputRequests":{}}`, true},
		{`{"resultType":"\u0069nput_required"}`, true},
		{`{"content":[{"type":"text","text":"done"}]}`, false},
	} {
		if got := mayNeedInput([]byte(tc.result)); got != tc.want {
			t.Errorf("mayNeedInput(%s) = %v, want %v", tc.result, got, tc.want)
		}
	}
}

// TestPushMemberNamesExact pins why pushes need no check of their member
// names: the SDK decodes a frame (jsonrpc.DecodeMessage, which the guard
// uses too) with exact names, so a push spelt "Method" is no request at
// all, and "PARAMS" is no params; the guard and the SDK read the same
// message. Should the SDK start folding case there, this fails.
func TestPushMemberNamesExact(t *testing.T) {
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":7,"Method":"elicitation/create","PARAMS":{"message":"hi"}}`,
		`{"jsonrpc":"2.0","id":7,"METHOD":"sampling/createMessage","params":{"maxTokens":1}}`,
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","PARAMS":{"message":"hi"}}`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(frame))
		if err != nil {
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && pipeline.Relayed(req.Method) != nil && req.Params != nil {
			t.Errorf("%s decoded as a push with params %s", frame, req.Params)
		}
	}
}
