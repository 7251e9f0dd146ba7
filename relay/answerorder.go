package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// keptAnswers bounds how many of a host's answers hostAnswers keeps: an
// answer is looked up as soon as the firewall has checked it, so only
// those in flight at once need to be there.
const keptAnswers = 32

// hostAnswers keeps the last answers a stdio host wrote to the firewall's
// requests (a response's result, each entry of a retry's inputResponses),
// as it wrote them. The SDK decodes a form's answer into a map, whose
// members encode sorted; the answer an upstream gets takes back the
// host's member order from here (answerInHostOrder).
type hostAnswers struct {
	mu  sync.Mutex
	raw [][]byte
}

// note keeps the answers frame holds, if any.
func (a *hostAnswers) note(frame []byte) {
	if a == nil || !bytes.Contains(frame, []byte(`"result"`)) && !bytes.Contains(frame, []byte(`"inputResponses"`)) {
		return
	}
	for _, m := range rawjson.Members(frame) {
		switch m.Key {
		case "result":
			a.keep(m.Value)
		case "params":
			for _, r := range rawjson.Members(rawjson.MemberValue(m.Value, "inputResponses")) {
				a.keep(r.Value)
			}
		}
	}
}

func (a *hostAnswers) keep(raw []byte) {
	if !rawjson.IsObject(raw) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.raw = append(a.raw, bytes.Clone(raw))
	if len(a.raw) > keptAnswers {
		a.raw = a.raw[len(a.raw)-keptAnswers:]
	}
}

// orderOf is the newest kept answer that decodes to res, _meta aside, or
// nil: an answer the firewall changed (narrowed, or written by an
// operator) has none, and keeps the order it was encoded in.
func (a *hostAnswers) orderOf(res mcp.Result) []byte {
	if a == nil || res == nil || reflect.TypeOf(res).Kind() != reflect.Pointer {
		return nil
	}
	want, err := json.Marshal(withoutMeta(res))
	if err != nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.raw) - 1; i >= 0; i-- {
		v := reflect.New(reflect.TypeOf(res).Elem()).Interface().(mcp.Result)
		if json.Unmarshal(a.raw[i], v) != nil {
			continue
		}
		if got, err := json.Marshal(withoutMeta(v)); err == nil && bytes.Equal(got, want) {
			return a.raw[i]
		}
	}
	return nil
}

// withoutMeta is a copy of res with no _meta: the host's _meta never
// crosses, so an answer is matched on the rest.
func withoutMeta(res mcp.Result) mcp.Result {
	v := reflect.New(reflect.TypeOf(res).Elem())
	v.Elem().Set(reflect.ValueOf(res).Elem())
	c := v.Interface().(mcp.Result)
	c.SetMeta(nil)
	return c
}

// orderedResult is a result that encodes with its members in the order
// of the host's answer it passes on unchanged (rawjson.InOrderOf).
type orderedResult struct {
	mcp.Result
	order []byte
}

func (r *orderedResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	return rawjson.InOrderOf(b, r.order), nil
}

// answerInHostOrder is the outermost receiving middleware of every
// upstream client: the answer an upstream gets to a push of a kind
// relayed to a host goes out in the member order the host wrote it, when
// it is the host's answer unchanged.
func (p *Proxy) answerInHostOrder(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || pipeline.Relayed(method) == nil {
			return res, err
		}
		if order := p.answers.orderOf(res); order != nil {
			return &orderedResult{res, order}, nil
		}
		return res, nil
	}
}
