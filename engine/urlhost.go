package engine

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
)

// URLHost is a URL's host read as the policy's facts read it
// (input.facts.elicitation.url), and as review show lays it out: one
// reading for both, so a reviewer is warned of a punycode or mixed-script
// host exactly when the policy sees one.
type URLHost struct {
	// ASCII is the host lower-cased in its A-label (xn--) form: the name a
	// browser looks up, and what allowed_hosts lists. A host IDNA refuses
	// is kept lower-cased as written, which no allowed_hosts entry matches.
	ASCII string
	// Unicode is ASCII with its A-labels decoded: what the user reads.
	// ASCII itself when they do not decode.
	Unicode string
	// Invalid is why IDNA refuses the host, nil when it takes it.
	Invalid error
	// Punycode reports that a label of ASCII is an A-label: the user is
	// shown other letters than are looked up.
	Punycode bool
	// MixedScripts are the scripts, sorted, of the first label of Unicode
	// whose letters mix scripts no language writes together; nil when no
	// label does.
	MixedScripts []string
}

// ReadURLHost reads host (a URL's Hostname) for the marks of a
// homograph: punycode, and letters of several scripts in one label.
func ReadURLHost(host string) URLHost {
	h := URLHost{ASCII: strings.ToLower(host)}
	if a, err := idna.Lookup.ToASCII(h.ASCII); err == nil {
		h.ASCII = a
	} else {
		h.Invalid = err
	}
	u, err := idna.ToUnicode(h.ASCII)
	if err != nil {
		u = h.ASCII
	}
	h.Unicode = u
	h.Punycode = HasALabel(h.ASCII)
	h.MixedScripts = mixedScripts(h.Unicode)
	return h
}

// HasALabel reports whether a label of host, in any case, is an IDNA
// A-label (xn--): a name spelt in punycode.
func HasALabel(host string) bool {
	for label := range strings.SplitSeq(host, ".") {
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return true
		}
	}
	return false
}

// mixedScripts are the scripts, sorted, of the first label of host that
// mixes letters of different scripts (Latin with Cyrillic, Greek with
// Latin…), the homograph trick "аpple.com" (a Cyrillic а) plays; nil when
// no label does. The mixes a language writes with (Han with Hiragana and
// Katakana, with Hangul, with Bopomofo, each also with Latin) are not
// counted, as UTS #39's highly restrictive level allows them.
func mixedScripts(host string) []string {
	for label := range strings.SplitSeq(host, ".") {
		scripts := map[string]bool{}
		for _, r := range label {
			if s := scriptOf(r); s != "" {
				scripts[s] = true
			}
		}
		if !allowedMix(scripts) {
			return slices.Sorted(maps.Keys(scripts))
		}
	}
	return nil
}

// allowedMix reports whether a label's scripts are one script, or one of
// the combinations a language writes with.
func allowedMix(scripts map[string]bool) bool {
	if len(scripts) <= 1 {
		return true
	}
	for _, mix := range scriptMixes {
		if subset(scripts, mix) {
			return true
		}
	}
	return false
}

var scriptMixes = []map[string]bool{
	{"Latin": true, "Han": true, "Hiragana": true, "Katakana": true},
	{"Latin": true, "Han": true, "Hangul": true},
	{"Latin": true, "Han": true, "Bopomofo": true},
}

func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// scriptOf names the script of a letter; "" for what belongs to no one
// script (digits, hyphens, marks, Common and Inherited characters).
func scriptOf(r rune) string {
	switch {
	case r < 0x80:
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	case !unicode.IsLetter(r):
		return ""
	}
	for _, name := range commonScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// commonScripts are tried first: the scripts host names are mostly written
// in, so a long IDN host costs a few table lookups per letter, not one per
// script Unicode has.
var commonScripts = []string{"Latin", "Cyrillic", "Greek", "Han", "Hiragana", "Katakana", "Hangul",
	"Arabic", "Hebrew", "Armenian", "Georgian", "Thai", "Devanagari"}
