package relay

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
)

// inSentOrder is a push u sent, as the SDK decoded it, with its free-form
// values back in the member order the upstream wrote them
// (pipeline.InOrderOf): the params of the push in flight that decode to
// in. Without one (a push the guard did not see) in stays as decoded.
func inSentOrder(u *upstream, in mcp.InputRequest) mcp.InputRequest {
	want, err := json.Marshal(in)
	if err != nil {
		return in
	}
	sent := u.held.sentParams(func(params json.RawMessage) bool { return decodesTo(params, in, want) })
	if sent == nil {
		return in
	}
	return pipeline.InOrderOf(in, sent)
}

// decodesTo reports whether params, decoded into in's type, encode as want.
func decodesTo(params json.RawMessage, in mcp.InputRequest, want []byte) bool {
	t := reflect.TypeOf(in)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	v := reflect.New(t.Elem()).Interface()
	if json.Unmarshal(params, v) != nil {
		return false
	}
	got, err := json.Marshal(v)
	return err == nil && bytes.Equal(got, want)
}
