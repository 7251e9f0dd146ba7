package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/idna"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
)

// urlSection lays out a URL-mode elicitation: the whole URL on a line of
// its own, then its parts, the host set apart in the form a browser may
// show and the form it looks up, and a warning for each way the URL may
// mislead. Nothing is a link: the URL is text through inert, like
// everything else the upstream wrote.
func (v *view) urlSection(w io.Writer, req map[string]any) {
	fmt.Fprintln(w, "\nURL (if the user agrees, their browser opens it; shown as text, not as a link):")
	s, isString := req["url"].(string)
	if !isString {
		writeLines(w, "  ", v.member("url", "url", orNone(req["url"]), 1))
	} else {
		fmt.Fprintln(w, "  "+gutterMark+" "+inert.Line(s))
		writeLines(w, "  ", urlParts(s))
	}
	if id, ok := req["elicitationId"]; ok {
		writeLines(w, "  ", v.member("elicitationId", "elicitationId", id, 1))
	}
}

// urlParts is the URL taken apart, one part a line, then its warnings.
func urlParts(s string) []string {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, shown whole above
		}
		return []string{"Warning: the URL does not parse: " + inert.Line(err.Error())}
	}
	out := []string{"scheme:   " + inert.Quote(u.Scheme)}
	var warn []string
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http":
		warn = append(warn, "the scheme is http: the page and what the user types travel unencrypted")
	default:
		warn = append(warn, "the scheme is "+inert.Quote(u.Scheme)+", not https: it is not a web page to open")
	}
	if u.User != nil {
		out = append(out, "userinfo: "+inert.Quote(u.User.String()))
		warn = append(warn, "the URL has a user name before @: the site is the host below, not what comes before @")
	}
	host, hostWarn := hostLines(u.Hostname())
	out = append(out, host...)
	warn = append(warn, hostWarn...)
	if p := u.Port(); p != "" {
		out = append(out, "port:     "+inert.Quote(p))
	}
	for _, part := range []struct{ name, val string }{{"path", u.Path}, {"query", u.RawQuery}, {"fragment", u.Fragment}} {
		if part.val != "" {
			out = append(out, fmt.Sprintf("%-9s %s", part.name+":", inert.Quote(part.val)))
		}
	}
	if u.Opaque != "" {
		out = append(out, "opaque:   "+inert.Quote(u.Opaque))
	}
	for _, w := range warn {
		out = append(out, "Warning: "+w)
	}
	return out
}

// maxHostLen is the longest host name DNS allows; a longer one is shown
// but not examined.
const maxHostLen = 253

// hostLines show a host in the form a browser may show (Unicode) and the
// form it looks up (ASCII, xn-- punycode for an international name), and
// warn when it is punycode or mixes scripts in a label, the ways a name
// imitates another.
func hostLines(h string) ([]string, []string) {
	if h == "" {
		return []string{"host:     (none)"}, nil
	}
	if len(h) > maxHostLen {
		return []string{"host:     " + inert.Quote(h)}, []string{fmt.Sprintf("the host is %d bytes long, longer than any DNS name", len(h))}
	}
	ascii, aerr := idna.Lookup.ToASCII(h)
	uni, uerr := idna.Display.ToUnicode(h)
	if aerr != nil || uerr != nil {
		return []string{"host:     " + inert.Quote(h)}, []string{"the host is not a valid internationalised name: " + inert.Line(firstErr(aerr, uerr).Error())}
	}
	var out, warn []string
	if uni == ascii {
		out = append(out, "host:     "+inert.Quote(ascii))
	} else {
		out = append(out, "host:     "+inert.Quote(uni)+" (Unicode, as a browser may show it)",
			"          "+inert.Quote(ascii)+" (ASCII, the name looked up)")
	}
	if isPunycode(h) {
		warn = append(warn, "the host is written in punycode (xn--): it reads as "+inert.Quote(uni)+"; make sure that is the site you expect")
	} else if uni != ascii {
		warn = append(warn, "the host is an international name: check the ASCII form, "+inert.Quote(ascii))
	}
	if scripts := mixedScripts(uni); scripts != nil {
		warn = append(warn, "the host mixes scripts ("+strings.Join(scripts, ", ")+") in one label: it may imitate another site's name")
	}
	return out, warn
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// isPunycode reports whether a label of h is an ACE label (xn--).
func isPunycode(h string) bool {
	for l := range strings.SplitSeq(strings.ToLower(h), ".") {
		if strings.HasPrefix(l, "xn--") {
			return true
		}
	}
	return false
}

// mixedScripts is the scripts of the first label of h that mixes them, nil
// when none does. Common and inherited characters (digits, hyphens,
// marks) belong to no script; Han with Hiragana, Katakana or Latin, Han
// with Bopomofo and Han with Hangul are how Japanese, Chinese and Korean
// are written (UTS #39, highly restrictive) and are not a mix.
func mixedScripts(h string) []string {
	for l := range strings.SplitSeq(h, ".") {
		set := labelScripts(l)
		if len(set) > 1 && !usualMix(set) {
			return set
		}
	}
	return nil
}

func labelScripts(label string) []string {
	var set []string
	for _, r := range label {
		if r < 0x80 {
			if unicode.IsLetter(r) && !slices.Contains(set, "Latin") {
				set = append(set, "Latin")
			}
			continue
		}
		for name, table := range unicode.Scripts {
			if name != "Common" && name != "Inherited" && unicode.Is(table, r) && !slices.Contains(set, name) {
				set = append(set, name)
			}
		}
	}
	slices.Sort(set)
	return set
}

// usualMixes are the sets of scripts a label may mix (UTS #39, highly
// restrictive).
var usualMixes = [][]string{{"Han", "Hiragana", "Katakana", "Latin"}, {"Bopomofo", "Han", "Latin"}, {"Han", "Hangul", "Latin"}}

func usualMix(set []string) bool {
	for _, allowed := range usualMixes {
		if !slices.ContainsFunc(set, func(s string) bool { return !slices.Contains(allowed, s) }) {
			return true
		}
	}
	return false
}
