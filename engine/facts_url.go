package engine

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// urlFacts describes a URL-mode elicitation's URL for rules about where
// the user is sent: the scheme, the host in ASCII (what the browser will
// resolve, and what allowed_hosts lists) and in Unicode (what the user
// reads), its registrable domain, and whether the host is punycode or
// mixes scripts, the marks of a homograph (read by ReadURLHost, as review
// show reads them). null for a form.
func urlFacts(req map[string]any) any {
	raw, ok := req["url"].(string)
	if !ok {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		u = &url.URL{} // every part empty, as a URL that names none
	}
	host := ReadURLHost(u.Hostname())
	return map[string]any{
		"scheme":             strings.ToLower(u.Scheme),
		"host":               host.ASCII,
		"port":               portOf(u),
		"userinfo":           u.User != nil,
		"registrable_domain": registrableDomain(host.ASCII),
		"punycode":           host.Punycode,
		"mixed_script":       host.MixedScripts != nil,
		"unicode_host":       host.Unicode,
	}
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
