package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sync"
)

// maskedPaths names the subtrees masking rewrites, as OPA's "masked" field
// does; within them only people's words and media are replaced.
var maskedPaths = []string{"/input/request", "/input/result", "/input/facts/texts"}

// textKeys are the keys whose values are people's words or media: text
// (message, tool_result and completion text), systemPrompt, data (image
// and audio), blob (embedded resources), texts (facts), and the free-form
// JSON a model or tool wrote (tool_use input, structuredContent).
var textKeys = map[string]bool{
	"text": true, "systemPrompt": true, "data": true, "blob": true,
	"texts": true, "input": true, "structuredContent": true,
}

// masker replaces the words in one event's input with keyed digests. It
// remembers each text's digest: the input carries every prompt text twice
// (in the request and in facts.texts), and hashing is most of what masking
// costs. A logEncoder keeps one and resets it for each event.
type masker struct {
	macs *sync.Pool // of keyed hmac hash.Hash
	seen map[string]string
}

// reset readies m for an event digested with the keyed hashes in macs,
// forgetting the texts of the last one.
func (m *masker) reset(macs *sync.Pool) {
	m.macs = macs
	if m.seen == nil {
		m.seen = map[string]string{}
	}
	clear(m.seen)
}

// digestValue digests a string, each string of a list (facts.texts, so
// positions still line up), or any other JSON value as a whole.
func (m *masker) digestValue(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return m.digestText(t)
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = m.digestValue(val)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return m.digest(nil)
	}
	return m.digest(b)
}

func (m *masker) digestText(s string) string {
	if d, ok := m.seen[s]; ok {
		return d
	}
	d := m.digest([]byte(s))
	m.seen[s] = d
	return d
}

// digest is a keyed hash (HMAC-SHA256 with the salt), shortened to 96 bits:
// enough to correlate equal texts, useless for guessing them without the
// salt.
func (m *masker) digest(b []byte) string {
	h := m.macs.Get().(hash.Hash)
	defer m.macs.Put(h)
	h.Reset()
	h.Write(b)
	var sum [sha256.Size]byte
	return "hmac-sha256:" + hex.EncodeToString(h.Sum(sum[:0])[:12])
}
