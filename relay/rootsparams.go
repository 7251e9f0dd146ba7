package relay

import (
	"bytes"
	"encoding/json"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// withRootsParams returns result with "params":{} given to each roots/list
// entry of its inputRequests that has none, or nil when no entry lacks
// them. A roots/list request takes no params, and mcp-go and the
// TypeScript SDK v2 leave them out of a 2026-07-28 input request, which is
// valid; but the SDK's decoder fails on such an entry, and with it the
// whole result, the host's call failing as if the upstream had not
// answered. The guard applies it to the bytes an upstream sends before the
// SDK reads them (guard.screen).
//
// Entries are read as the SDK reads them (encoding/json: member names
// matched without regard to case, the last of a repeated name winning), and
// every member else stays as sent, repeats and order included: only the
// missing params are added.
func withRootsParams(result json.RawMessage) json.RawMessage {
	if !mayNeedInput(result) || !bytes.Contains(result, []byte("roots")) && !bytes.Contains(result, []byte(`\u`)) || !json.Valid(result) {
		return nil
	}
	out, changed := rebuildObject(result, func(key string, value json.RawMessage) (json.RawMessage, bool) {
		if key != "inputRequests" { // the SDK reads results with exact member names
			return nil, false
		}
		return rebuildObject(value, func(_ string, entry json.RawMessage) (json.RawMessage, bool) {
			return entryWithParams(entry)
		})
	})
	if !changed {
		return nil
	}
	return out
}

// entryWithParams is an input request entry given "params":{} when it is
// a roots/list without params.
func entryWithParams(entry json.RawMessage) (json.RawMessage, bool) {
	var e struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(entry, &e) != nil || e.Method != "roots/list" || e.Params != nil {
		return nil, false
	}
	i := rawjson.SkipSpace(entry, 0) + 1 // just inside the '{'
	rest := entry[i:]
	sep := ","
	if j := rawjson.SkipSpace(rest, 0); j < len(rest) && rest[j] == '}' {
		sep = ""
	}
	return append([]byte(`{"params":{}`+sep), rest...), true
}

// rebuildObject writes the JSON object raw member by member, each value
// replaced where change says so; false when nothing changed (or raw is no
// object).
func rebuildObject(raw json.RawMessage, change func(key string, value json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, bool) {
	ms := rawjson.Members(raw)
	var b bytes.Buffer
	b.WriteByte('{')
	changed := false
	for i, m := range ms {
		value := m.Value
		if v, ok := change(m.Key, m.Value); ok {
			value, changed = v, true
		}
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.Key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), changed
}
