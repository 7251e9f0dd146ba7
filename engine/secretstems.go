package engine

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"unicode/utf8"
)

// secretStems are the stems every word of the shipped policy's secret
// pattern contains (data.mcpxfw.lib.secret_needles, which a test keeps
// equal to this list), sorted. Finding them is the policy's cheap screen
// before its case-folding regex; done here it costs a few microseconds
// where Rego's lower and concat over every text cost tens, and the regex
// still decides.
var secretStems = []string{"cookie", "credential", "key", "pass", "secret", "token"}

// stemAnchors are a part of each stem that starts with a letter prose uses
// rarely, so the search for it skips ahead quickly; only text containing
// the anchor is searched for the whole stem. "secret" and "token" searched
// for directly cost five times the rest together on ordinary text, which
// is full of s, t, se and to.
var stemAnchors = map[string]string{
	"cookie": "kie", "credential": "cred", "key": "key", "pass": "pass", "secret": "cret", "token": "ken",
}

// foldBufs holds the buffers ASCII texts are lower-cased into, so the
// screen allocates nothing per request.
var foldBufs = sync.Pool{New: func() any { return new([]byte) }}

// secretStemsIn lists the stems that occur in texts once folded as the
// policy folds them: lower (which also maps the Kelvin sign to k), then the
// long s to s. The texts are folded into one buffer, newline-separated as
// the policy joins them, and searched for each stem's anchor and, where it
// occurs, for the stem. The result is sorted and never nil.
func secretStemsIn(texts []any) []any {
	buf := foldBufs.Get().(*[]byte)
	defer foldBufs.Put(buf)
	folded := (*buf)[:0]
	for i, t := range texts {
		if i > 0 {
			folded = append(folded, '\n')
		}
		s, _ := t.(string)
		folded = appendFolded(folded, s)
	}
	*buf = folded
	out := []any{}
	for _, stem := range secretStems {
		if bytes.Contains(folded, []byte(stemAnchors[stem])) && bytes.Contains(folded, []byte(stem)) {
			out = append(out, stem)
		}
	}
	return out
}

// appendFolded appends strings.ToLower(s) with "ſ" replaced by "s", as
// Rego's replace(lower(s), "ſ", "s") computes it. ASCII text, the common
// case, is folded eight bytes at a time; other text takes the very
// functions Rego's builtins call, so the two cannot disagree.
func appendFolded(dst []byte, s string) []byte {
	start := len(dst)
	dst = append(dst, s...)
	if !foldASCII(dst[start:]) {
		dst = append(dst[:start], strings.ReplaceAll(strings.ToLower(s), "ſ", "s")...)
	}
	return dst
}

// foldASCII lower-cases b in place and reports whether b was all ASCII;
// when it was not, b is left partly folded and the caller starts over.
func foldASCII(b []byte) bool {
	const high = 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if x&high != 0 {
			return false
		}
		// With every byte below 0x80, adding 0x3f sets a byte's high bit
		// when it is 'A' or above, adding 0x25 when it is above 'Z', and
		// no addition carries into the next byte.
		upper := (x + 0x3f3f3f3f3f3f3f3f) &^ (x + 0x2525252525252525) & high
		binary.LittleEndian.PutUint64(b[i:], x|upper>>2)
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= utf8.RuneSelf:
			return false
		case 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		}
	}
	return true
}
