package validate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets of elicitation and roots assert what FuzzRequest and
// FuzzResult assert for sampling: no panic, well-formed violations, the
// strict parser agreeing with encoding/json, an accepted document within
// every limit, re-encoding to bytes accepted again and read the same; and
// each kind's own invariant on what it accepts.

// fuzzElicitOptions builds Options for an elicitation check: form and url
// are the modes offered.
func fuzzElicitOptions(era uint8, form, url, small bool) Options {
	opt := fuzzOptions(era, false, false, small)
	opt.Caps.Form, opt.Caps.URL = form, url
	return opt
}

// reaccept re-encodes an accepted document and checks it with check:
// accepted again, and parsed to an equal document.
func reaccept(t *testing.T, raw []byte, doc Document, opt Options, check func([]byte, Options) (Document, []Violation)) {
	t.Helper()
	again, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("re-encoding an accepted document: %v", err)
	}
	doc2, vs2 := check(again, reencodedOptions(opt, again))
	if len(vs2) > 0 {
		t.Fatalf("accepted %q re-encodes to %q with violations %+v", raw, again, vs2)
	}
	if !reflect.DeepEqual(doc, doc2) {
		t.Fatalf("accepted %q re-encodes to %q, which parses differently:\n%#v\n%#v", raw, again, doc, doc2)
	}
}

// FuzzElicitation checks Elicitation on any bytes, era, offered modes and
// both sets of limits. An accepted request must also be within the
// elicitation limits, use a mode it was offered, and in form mode have
// only flat primitive fields.
func FuzzElicitation(f *testing.F) {
	for _, fx := range loadFixtures(f, "requests/elicitation") {
		for _, opt := range fx.options() {
			for _, small := range []bool{false, true} {
				f.Add(fx.params(), eraIndex(opt.Era), opt.Caps.Form, opt.Caps.URL, small)
			}
		}
	}
	for _, fx := range loadFixtures(f, "requests/elicitation/results") {
		f.Add([]byte(fx.Request), uint8(3), true, true, false)
	}
	for _, h := range elicitationHostileSeeds(f) {
		for _, era := range h.eras {
			f.Add(h.params, eraIndex(era), h.caps.Form, h.caps.URL, false)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, era uint8, form, url, small bool) {
		opt := fuzzElicitOptions(era, form, url, small)
		doc, vs := Elicitation(raw, opt)
		checkViolations(t, doc, vs)
		checkAgainstStdlib(t, raw, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		lim := opt.Limits.resolved()
		checkElicitLimits(t, raw, doc, opt, lim)
		reaccept(t, raw, doc, opt, Elicitation)
	})
}

// checkElicitLimits walks an accepted elicitation request independently
// of the checker.
func checkElicitLimits(t *testing.T, raw []byte, doc Document, opt Options, lim Limits) {
	t.Helper()
	if len(raw) > lim.MaxBytes || depthOf(doc) > lim.MaxDepth {
		t.Fatalf("accepted %d bytes, depth %d", len(raw), depthOf(doc))
	}
	if msg := doc["message"].(string); len(msg) > lim.MaxTextBytes || strings.TrimSpace(msg) == "" {
		t.Fatalf("accepted a message of %d bytes", len(msg))
	}
	if ElicitationMode(doc) == modeURL {
		u := doc["url"].(string)
		if !opt.Caps.URL || len(u) > lim.MaxURLBytes || urlProblem(u) != "" {
			t.Fatalf("accepted URL mode (offered %v) with a URL of %d bytes: %q", opt.Caps.URL, len(u), urlProblem(u))
		}
		if !strings.HasPrefix(strings.ToLower(u), "http://") && !strings.HasPrefix(strings.ToLower(u), "https://") {
			t.Fatalf("accepted a URL that is not http(s): %q", u)
		}
		return
	}
	if !opt.Caps.Form && opt.Caps.URL {
		t.Fatal("accepted form mode, which was not offered")
	}
	props := doc["requestedSchema"].(map[string]any)["properties"].(map[string]any)
	if len(props) > lim.MaxFields {
		t.Fatalf("accepted %d fields, limit %d", len(props), lim.MaxFields)
	}
	for name, v := range props {
		p := v.(map[string]any)
		if len(name) > lim.MaxLabelBytes || !fieldKinds[p["type"].(string)] || has(p, "properties") || has(p, "$ref") {
			t.Fatalf("accepted field %q: %v", name, p)
		}
		for _, k := range []string{"enum", "oneOf"} {
			if list, ok := p[k].([]any); ok && len(list) > lim.MaxEnumValues {
				t.Fatalf("accepted %d options, limit %d", len(list), lim.MaxEnumValues)
			}
		}
		if items, ok := p["items"].(map[string]any); ok && (has(items, "properties") || items["type"] == "object") {
			t.Fatalf("accepted nested items in %q", name)
		}
	}
}

// FuzzElicitationResult checks ElicitationResult against a request that is
// itself fuzzed (valid or not; nil included). An accepted answer to a form
// must hold only the form's fields, every required one, and no content
// with decline, cancel or URL mode.
func FuzzElicitationResult(f *testing.F) {
	for _, fx := range loadFixtures(f, "requests/elicitation/results") {
		for _, opt := range fx.options() {
			for _, small := range []bool{false, true} {
				f.Add(fx.result(), []byte(fx.Request), eraIndex(opt.Era), opt.Caps.URL, small)
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw, request []byte, era uint8, url, small bool) {
		opt := fuzzElicitOptions(era, true, url, small)
		req, _ := Elicitation(request, opt)
		doc, vs := ElicitationResult(raw, req, opt)
		checkViolations(t, doc, vs)
		checkAgainstStdlib(t, raw, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		checkAnswer(t, doc, req)
		if lim := opt.Limits.resolved(); len(raw) > lim.MaxBytes || depthOf(doc) > lim.MaxDepth {
			t.Fatalf("accepted %d bytes, depth %d", len(raw), depthOf(doc))
		}
		reaccept(t, raw, doc, opt, func(b []byte, o Options) (Document, []Violation) { return ElicitationResult(b, req, o) })
	})
}

// checkAnswer checks an accepted result against its request without the
// checker's field model.
func checkAnswer(t *testing.T, doc, req Document) {
	t.Helper()
	if !actions[doc["action"].(string)] {
		t.Fatalf("accepted action %v", doc["action"])
	}
	content, present := doc["content"].(map[string]any)
	if present && (doc["action"] != "accept" || ElicitationMode(req) == modeURL) {
		t.Fatalf("accepted content with %v in mode %s", doc["action"], ElicitationMode(req))
	}
	if doc["action"] != "accept" || ElicitationMode(req) == modeURL {
		return
	}
	s, _ := req["requestedSchema"].(map[string]any)
	props, _ := s["properties"].(map[string]any)
	for k := range content {
		if !has(props, k) {
			t.Fatalf("accepted field %q, which the form does not have", k)
		}
	}
	for _, name := range requiredFields(req) {
		if !has(content, name) {
			t.Fatalf("accepted an answer without required field %q", name)
		}
	}
}

// FuzzRootsResult checks RootsResult. An accepted list holds at most
// MaxRoots roots, each a file:// URI given once.
func FuzzRootsResult(f *testing.F) {
	for _, fx := range loadFixtures(f, "requests/roots/results") {
		for _, opt := range fx.options() {
			for _, small := range []bool{false, true} {
				f.Add(fx.result(), eraIndex(opt.Era), small)
			}
		}
	}
	for _, fx := range loadFixtures(f, "requests/roots") {
		f.Add(fx.params(), uint8(4), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, era uint8, small bool) {
		opt := fuzzOptions(era, false, false, small)
		doc, vs := RootsResult(raw, nil, opt)
		checkViolations(t, doc, vs)
		checkAgainstStdlib(t, raw, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		lim := opt.Limits.resolved()
		roots := doc["roots"].([]any)
		if len(raw) > lim.MaxBytes || depthOf(doc) > lim.MaxDepth || len(roots) > lim.MaxRoots {
			t.Fatalf("accepted %d bytes, depth %d, %d roots", len(raw), depthOf(doc), len(roots))
		}
		seen := map[string]bool{}
		for _, r := range roots {
			uri := r.(map[string]any)["uri"].(string)
			if !strings.HasPrefix(strings.ToLower(uri), "file://") || seen[uri] {
				t.Fatalf("accepted root %q (seen before: %v)", uri, seen[uri])
			}
			seen[uri] = true
		}
		reaccept(t, raw, doc, opt, func(b []byte, o Options) (Document, []Violation) { return RootsResult(b, nil, o) })
	})
}
