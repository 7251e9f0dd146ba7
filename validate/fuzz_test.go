package validate

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzEras are the eras a fuzz input picks from by index; the last one is
// unknown on purpose.
var fuzzEras = []Era{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"}

func fuzzOptions(era uint8, tools, context bool) Options {
	return Options{Era: fuzzEras[int(era)%len(fuzzEras)], Caps: Capabilities{Tools: tools, Context: context}}
}

func eraIndex(era string) uint8 {
	for i, e := range fuzzEras {
		if e == era {
			return uint8(i)
		}
	}
	return 0
}

// FuzzRequest checks that Request never panics, that a nil document always
// comes with a violation, that every violation is well formed, and that a
// clean document stays clean when re-encoded: what the firewall forwards is
// the re-encoding, so it must pass the same checks.
func FuzzRequest(f *testing.F) {
	for _, fx := range loadFixtures(f, "requests") {
		for _, opt := range fx.options() {
			f.Add(fx.params(), eraIndex(opt.Era), opt.Caps.Tools, opt.Caps.Context)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, era uint8, tools, context bool) {
		opt := fuzzOptions(era, tools, context)
		doc, vs := Request(raw, opt)
		checkViolations(t, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("re-encoding a clean document: %v", err)
		}
		if _, vs := Request(again, opt); len(vs) > 0 {
			t.Fatalf("clean input %q re-encodes to %q with violations %+v", raw, again, vs)
		}
	})
}

// FuzzResult checks the same properties for results, against the request
// of a fixture.
func FuzzResult(f *testing.F) {
	for _, fx := range loadFixtures(f, "results") {
		f.Add(fx.result(), []byte(fx.Request), eraIndex(fx.Era), fx.Caps.Tools)
	}
	f.Fuzz(func(t *testing.T, raw, request []byte, era uint8, tools bool) {
		opt := fuzzOptions(era, tools, false)
		req, _ := Request(request, opt)
		doc, vs := Result(raw, req, opt)
		checkViolations(t, doc, vs)
		if doc == nil || len(vs) > 0 {
			return
		}
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("re-encoding a clean document: %v", err)
		}
		if _, vs := Result(again, req, opt); len(vs) > 0 {
			t.Fatalf("clean result %q re-encodes to %q with violations %+v", raw, again, vs)
		}
	})
}

func checkViolations(t *testing.T, doc Document, vs []Violation) {
	t.Helper()
	if doc == nil && len(vs) == 0 {
		t.Fatal("nil document without a violation")
	}
	for _, v := range vs {
		if !listed(ruleID(v.Rule)) {
			t.Fatalf("unlisted rule %q", v.Rule)
		}
		if v.Path != "" && !strings.HasPrefix(v.Path, "/") {
			t.Fatalf("path %q is not a JSON Pointer", v.Path)
		}
		if v.Message == "" {
			t.Fatalf("rule %s at %s has no message", v.Rule, v.Path)
		}
	}
}
