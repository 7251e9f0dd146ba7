package validate

import (
	"net/url"
	"strings"
	"unicode"
)

// elicitURL checks URL mode's url: a string within MaxURLBytes, without
// spaces, control or invisible format characters (which would make what
// a person reads differ from where a browser goes), parseable, absolute,
// with a host, and http or https. Whether a host, scheme or userinfo is
// acceptable is policy: a look-alike (punycode or mixed-script) host is
// well formed and reaches the policy, which holds it.
func (c *checker) elicitURL(doc Document) {
	const path = "/url"
	if !c.required(ruleEliURL, "", doc, "url", kindString) {
		return
	}
	s := doc["url"].(string)
	if len(s) > c.lim.MaxURLBytes {
		c.add(ruleLimitURL, path, "url is %d bytes, limit %d", len(s), c.lim.MaxURLBytes)
		return
	}
	if problem := urlProblem(s); problem != "" {
		c.add(ruleEliURL, path, "%s", problem)
	}
}

// webSchemes are the schemes a URL-mode elicitation may send a person to.
// javascript:, data:, file:, vbscript: and every other scheme would run
// or read something locally rather than open a page.
var webSchemes = map[string]bool{"http": true, "https": true}

// urlProblem says what is wrong with an elicitation URL, or "".
func urlProblem(s string) string {
	if s == "" {
		return "url is empty"
	}
	if !visible(s) {
		return "url holds a space, a control character or an invisible format character"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "url does not parse as a URL"
	case u.Scheme == "":
		return "url is not absolute: it has no scheme"
	case !webSchemes[strings.ToLower(u.Scheme)]:
		return "url scheme " + quote(u.Scheme) + " is not http or https"
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "url has no host"
	case strings.Contains(rawHost(s), "%"):
		return "url host holds a percent escape: a browser would go to another host than the one shown"
	}
	return ""
}

// visible reports whether s holds only characters that show and no space
// or other separator.
func visible(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || !shows(r) {
			return false
		}
	}
	return true
}

// shows reports whether r is drawn as what it is: not a control character
// (C0, DEL, C1), an invisible format character (direction overrides,
// zero-width characters, tags) or U+FFFD, which stands for bytes that
// were not text. A URL or a root's URI holding one shows a person other
// than what a browser or a server is given.
func shows(r rune) bool {
	return !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) && r != '\uFFFD'
}

// rawHost returns the host of URL s as written (url.Parse unescapes it):
// what follows "//" and any userinfo, up to the path, query or fragment.
func rawHost(s string) string {
	_, rest, ok := strings.Cut(s, "//")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}
