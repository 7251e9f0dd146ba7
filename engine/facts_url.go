package engine

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// urlFacts describes a URL-mode elicitation's URL for rules about where
// the user is sent: the scheme, the host in ASCII (what the browser will
// resolve, and what allowed_hosts lists) and in Unicode (what the user
// reads), its registrable domain, and whether the host is punycode or
// mixes scripts, the marks of a homograph. null for a form.
func urlFacts(req map[string]any) any {
	raw, ok := req["url"].(string)
	if !ok {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return map[string]any{"scheme": "", "host": "", "port": nil, "userinfo": false,
			"registrable_domain": "", "punycode": false, "mixed_script": false, "unicode_host": ""}
	}
	host := asciiHost(u.Hostname())
	unicodeHost, err := idna.ToUnicode(host)
	if err != nil {
		unicodeHost = host
	}
	return map[string]any{
		"scheme":             strings.ToLower(u.Scheme),
		"host":               host,
		"port":               portOf(u),
		"userinfo":           u.User != nil,
		"registrable_domain": registrableDomain(host),
		"punycode":           isPunycode(host),
		"mixed_script":       mixedScript(unicodeHost),
		"unicode_host":       unicodeHost,
	}
}

// asciiHost is host lower-cased in its ASCII (A-label) form; a host IDNA
// cannot convert is kept lower-cased as written, which no allowed_hosts
// entry matches.
func asciiHost(host string) string {
	host = strings.ToLower(host)
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		return a
	}
	return host
}

// portOf is the URL's explicit port as a number, null when it has none
// (or one that is not a number).
func portOf(u *url.URL) any {
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil
	}
	return p
}

// registrableDomain is host's eTLD+1 by the public suffix list
// (example.co.uk for a.b.example.co.uk), "" for an IP address or a host
// that is itself a public suffix.
func registrableDomain(host string) string {
	if host == "" || net.ParseIP(host) != nil {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return d
}

// isPunycode reports whether any label of the ASCII host is an IDNA
// A-label: the host is shown to the user as other letters than it is
// spelt.
func isPunycode(host string) bool {
	for label := range strings.SplitSeq(host, ".") {
		if strings.HasPrefix(label, "xn--") {
			return true
		}
	}
	return false
}

// mixedScript reports whether a label of host mixes letters of different
// scripts (Latin with Cyrillic, Greek with Latin…), the homograph trick
// "аpple.com" (a Cyrillic а) plays. The mixes a language writes with
// (Han with Hiragana and Katakana, with Hangul, with Bopomofo, each also
// with Latin) are not counted, as UTS #39's highly restrictive level
// allows them.
func mixedScript(host string) bool {
	for label := range strings.SplitSeq(host, ".") {
		scripts := map[string]bool{}
		for _, r := range label {
			if s := scriptOf(r); s != "" {
				scripts[s] = true
			}
		}
		if !allowedMix(scripts) {
			return true
		}
	}
	return false
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
