package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// CallDigest names one host call so a state sealed for it cannot be used
// with another. Arguments are canonicalised (key order, whitespace and
// escapes do not matter; nil, empty and null equal {}), since a host may
// re-encode the same arguments on its retry. Numbers keep their literal
// text: through float64, distinct large integers would collide.
// Arguments that are not one valid JSON value are hashed raw instead, so
// they still never match a different call. Fields are length-prefixed so
// ("a", "bc") and ("ab", "c") differ.
func CallDigest(method, name string, arguments json.RawMessage) string {
	h := sha256.New()
	for _, f := range []string{"mcpx-fw/call/v1", method, name, canonicalArguments(arguments)} {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalArguments is "json:" and the re-encoded value, or "raw:" and
// the bytes when they are not exactly one valid JSON value in valid UTF-8
// (the decoder would replace invalid UTF-8, merging distinct inputs).
func canonicalArguments(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "json:{}"
	}
	if !utf8.Valid(raw) {
		return "raw:" + string(raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
		return "raw:" + string(raw)
	}
	if v == nil {
		return "json:{}"
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "raw:" + string(raw)
	}
	return "json:" + string(out)
}
