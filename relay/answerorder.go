package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// keptValues bounds how many values a recentJSON keeps: a value is looked
// up as soon as the firewall has judged it, so only those in flight at
// once need to be there.
const keptValues = 32

// recentJSON keeps the last JSON values one side wrote, as it wrote them:
// a stdio host's answers to the firewall's requests (Proxy.answers), an
// upstream's input requests (upstream.inputs). The SDK decodes their
// free-form parts into maps, whose members encode sorted; what crosses
// takes back the writer's member order from here (rawjson.InOrderOf).
// Only the order is ever taken: a value found for the wrong message
// changes no name and no value.
type recentJSON struct {
	mu   sync.Mutex
	kept []*keptJSON
}

// keptJSON is one kept value and the keys find compares it by, each made
// on the first find that needs it, so that no lookup decodes a kept value
// another lookup decoded already: plain, the value itself in canonical
// form without its _meta; key, what it decodes to as an SDK type
// (keyType), in canonical form (matchKey).
type keptJSON struct {
	raw     []byte
	plain   []byte
	keyType reflect.Type
	key     []byte
}

func (r *recentJSON) keep(raw []byte) {
	if r == nil || !rawjson.IsObject(raw) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = append(r.kept, &keptJSON{raw: bytes.Clone(raw)})
	if len(r.kept) > keptValues {
		r.kept = r.kept[len(r.kept)-keptValues:]
	}
}

// find is the newest kept value that decodes to v (a pointer to an SDK
// type), _meta aside, or nil: a value the firewall changed (an answer
// narrowed, or an operator's) has none, and keeps the order it was
// encoded in.
func (r *recentJSON) find(v any) []byte {
	t := reflect.TypeOf(v)
	if r == nil || t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	want := matchKey(v)
	if want == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.kept) - 1; i >= 0; i-- {
		if bytes.Equal(r.kept[i].plainKey(), want) {
			return r.kept[i].raw
		}
	}
	for i := len(r.kept) - 1; i >= 0; i-- {
		if bytes.Equal(r.kept[i].keyAs(t), want) {
			return r.kept[i].raw
		}
	}
	return nil
}

// plainKey is k's value in canonical form without its _meta: a value the
// SDK decodes without loss (no member it drops or rewrites) matches on it
// without being decoded as the SDK's type, which costs many times more.
func (k *keptJSON) plainKey() []byte {
	if k.plain == nil {
		k.plain = canonicalRaw(k.raw, true)
		if k.plain == nil {
			k.plain = []byte{} // not JSON: matches nothing, and is not read again
		}
	}
	return k.plain
}

// keyAs is k's key as type t, decoding k's value the first time; nil
// when it does not decode as t.
func (k *keptJSON) keyAs(t reflect.Type) []byte {
	if k.keyType == t {
		return k.key
	}
	k.keyType, k.key = t, nil
	got := reflect.New(t.Elem()).Interface()
	if json.Unmarshal(k.raw, got) == nil {
		k.key = matchKey(got)
	}
	return k.key
}

// matchKey is v's canonical form without its _meta, nil if it has none:
// what v holds, whatever order its raw parts keep (pipeline.InOrderOf
// gives free-form values the order of their sender).
func matchKey(v any) []byte { return canonical(withoutMeta(v)) }

// canonical is v's JSON with every object's members sorted, nil if it has
// none: what v holds, whatever order its raw parts keep.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return canonicalRaw(b, false)
}

// canonicalRaw is the JSON b with every object's members sorted, and,
// when noMeta, without the outermost object's _meta; nil when b is not
// JSON.
func canonicalRaw(b []byte, noMeta bool) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var generic any
	if d.Decode(&generic) != nil {
		return nil
	}
	if m, ok := generic.(map[string]any); ok && noMeta {
		delete(m, "_meta")
	}
	out, err := json.Marshal(generic)
	if err != nil {
		return nil
	}
	return out
}

// withoutMeta is a copy of v with no _meta: the _meta of one hop never
// crosses to the next, so a value is matched on the rest.
func withoutMeta(v any) any {
	c := reflect.New(reflect.TypeOf(v).Elem())
	c.Elem().Set(reflect.ValueOf(v).Elem())
	if m, ok := c.Interface().(interface{ SetMeta(map[string]any) }); ok {
		m.SetMeta(nil)
	}
	return c.Interface()
}

// noteAnswers keeps the answers a host's frame holds: a response's
// result, each entry of a retry's inputResponses.
func (r *recentJSON) noteAnswers(frame []byte) {
	if r == nil || !bytes.Contains(frame, []byte(`"result"`)) && !bytes.Contains(frame, []byte(`"inputResponses"`)) {
		return
	}
	for _, m := range rawjson.Members(frame) {
		switch m.Key {
		case "result":
			r.keep(m.Value)
		case "params":
			for _, a := range rawjson.Members(rawjson.MemberValue(m.Value, "inputResponses")) {
				r.keep(a.Value)
			}
		}
	}
}

// orderedResult is a result that encodes with its members in order, the
// order of the host's answer it passes on unchanged.
type orderedResult struct {
	mcp.Result
	order []byte
}

func (r *orderedResult) MarshalJSON() ([]byte, error) { return marshalInOrder(r.Result, r.order) }

// orderedResponse is orderedResult for an answer to an input request.
type orderedResponse struct {
	mcp.InputResponse
	order []byte
}

func (r *orderedResponse) MarshalJSON() ([]byte, error) {
	return marshalInOrder(r.InputResponse, r.order)
}

func marshalInOrder(v any, order []byte) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return rawjson.InOrderOf(b, order), nil
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
		if order := p.answers.find(res); order != nil {
			return &orderedResult{res, order}, nil
		}
		return res, nil
	}
}

// responsesInHostOrder is responses as the upstream's retry carries them:
// each the host's answer unchanged in the member order the host wrote it.
func (p *Proxy) responsesInHostOrder(responses mcp.InputResponseMap) mcp.InputResponseMap {
	if p.answers == nil || len(responses) == 0 {
		return responses
	}
	out := make(mcp.InputResponseMap, len(responses))
	for key, res := range responses {
		out[key] = res
		if order := p.answers.find(res); order != nil {
			out[key] = &orderedResponse{res, order}
		}
	}
	return out
}

// noteHostAnswers keeps the answers in the bodies hosts post over HTTP,
// as they wrote them, while the SDK reads each body through it.
func (p *Proxy) noteHostAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
			r.Body = &notingBody{ReadCloser: r.Body, note: p.answers.noteAnswers}
		}
		next.ServeHTTP(w, r)
	})
}

// notingBody hands the whole body to note once it has been read to its
// end (a body cut short by a limit is not noted).
type notingBody struct {
	io.ReadCloser
	buf  bytes.Buffer
	note func([]byte)
	once sync.Once
}

func (b *notingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.once.Do(func() { b.note(b.buf.Bytes()) })
	}
	return n, err
}
