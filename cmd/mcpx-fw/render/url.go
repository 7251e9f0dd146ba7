package render

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
)

// urlSection lays out a URL-mode elicitation: the whole URL on a line of
// its own, then its parts, the host set apart in the form a browser may
// show and the form it looks up, and a warning for each way the URL may
// mislead. Nothing is a link: the URL is text through inert, like
// everything else the upstream wrote.
func (v elicitView) urlSection(w io.Writer, req map[string]any) {
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
// as written, with a warning.
const maxHostLen = 253

// hostLines show a host in the form a browser may show (Unicode) and the
// form it looks up (ASCII, xn-- punycode for an international name), and
// warn when it is punycode or mixes scripts in a label, the ways a name
// imitates another. The host is read by engine.ReadURLHost, as the
// policy's facts read it: show warns of exactly what the policy sees.
func hostLines(h string) ([]string, []string) {
	if h == "" {
		return []string{"host:     (none)"}, nil
	}
	host := engine.ReadURLHost(h)
	var out, warn []string
	switch {
	case len(h) > maxHostLen:
		out = append(out, "host:     "+inert.Quote(h))
		warn = append(warn, fmt.Sprintf("the host is %d bytes long, longer than any DNS name", len(h)))
	case host.Invalid != nil:
		out = append(out, "host:     "+inert.Quote(h))
		warn = append(warn, "the host is not a valid internationalised name: "+inert.Line(host.Invalid.Error()))
	case host.Unicode == host.ASCII:
		out = append(out, "host:     "+inert.Quote(host.ASCII))
	default:
		out = append(out, "host:     "+inert.Quote(host.Unicode)+" (Unicode, as a browser may show it)",
			"          "+inert.Quote(host.ASCII)+" (ASCII, the name looked up)")
	}
	switch {
	case host.Punycode && engine.HasALabel(h):
		warn = append(warn, "the host is written in punycode (xn--): it reads as "+inert.Quote(host.Unicode)+"; make sure that is the site you expect")
	case host.Punycode:
		warn = append(warn, "the host is an international name: check the ASCII form, "+inert.Quote(host.ASCII))
	}
	if host.MixedScripts != nil {
		warn = append(warn, "the host mixes scripts ("+strings.Join(host.MixedScripts, ", ")+") in one label: it may imitate another site's name")
	}
	return out, warn
}
