package validate

import (
	"fmt"
	goparser "go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// doc.go documents every rule in a preformatted block, four lines a rule:
//
//	<id>  "<title>"
//	    eras:   <Rule.Eras>
//	    wire:   <code per stage, from Rule.Stages>
//	    source: <Rule.Source>
//
// The tests below read that block back from the package comment and
// compare it with Rules(), field by field.

// docEntry is one rule as doc.go lists it.
type docEntry struct {
	id, title, eras, wire, source string
	line                          int // line of the entry within the comment
}

// wireOf is the wire column for a rule: -32602 for a request violation
// (relay/internal/refusal sends the title as message), -32603 for a result
// violation ("host returned an invalid completion: <title>").
func wireOf(stages string) string {
	var parts []string
	for s := range strings.SplitSeq(stages, ", ") {
		switch s {
		case stReq:
			parts = append(parts, "-32602 (request)")
		case stRes:
			parts = append(parts, "-32603 (result)")
		default:
			parts = append(parts, "? ("+s+")")
		}
	}
	return strings.Join(parts, ", ")
}

// docBlock renders rules the way doc.go lists them, without the comment
// markers; a failing test prints it for pasting into doc.go.
func docBlock(rules []Rule) string {
	var b strings.Builder
	for _, r := range rules {
		fmt.Fprintf(&b, "\t%s  %s\n", r.ID, strconv.Quote(r.Title))
		fmt.Fprintf(&b, "\t    eras:   %s\n", r.Eras)
		fmt.Fprintf(&b, "\t    wire:   %s\n", wireOf(r.Stages))
		fmt.Fprintf(&b, "\t    source: %s\n", r.Source)
	}
	return b.String()
}

// packageDoc returns the text of the package comment in doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := goparser.ParseFile(token.NewFileSet(), "doc.go", nil, goparser.ParseComments|goparser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	return f.Doc.Text()
}

// parseDocTable reads the rule entries of a package comment: a line
// indented by one tab starts an entry, lines indented by a tab and four
// spaces give its fields. Malformed lines are returned as problems.
func parseDocTable(text string) ([]docEntry, []string) {
	var out []docEntry
	var problems []string
	for n, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "\t")
		if !ok {
			continue
		}
		if field, ok := strings.CutPrefix(rest, "    "); ok {
			if len(out) == 0 {
				problems = append(problems, fmt.Sprintf("line %d: field before any rule: %q", n+1, line))
				continue
			}
			e := &out[len(out)-1]
			key, val, _ := strings.Cut(field, ":")
			val = strings.TrimSpace(val)
			switch key {
			case "eras":
				e.eras = val
			case "wire":
				e.wire = val
			case "source":
				e.source = val
			default:
				problems = append(problems, fmt.Sprintf("line %d: unknown field %q", n+1, key))
			}
			continue
		}
		id, title, _ := strings.Cut(rest, "  ")
		unq, err := strconv.Unquote(strings.TrimSpace(title))
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: want <id>  \"<title>\", got %q", n+1, line))
		}
		out = append(out, docEntry{id: id, title: unq, line: n + 1})
	}
	return out, problems
}

// compareDoc lists every difference between the rules and the entries
// doc.go has for them.
func compareDoc(rules []Rule, entries []docEntry) []string {
	var problems []string
	byID := map[string]docEntry{}
	for _, e := range entries {
		if _, dup := byID[e.id]; dup {
			problems = append(problems, fmt.Sprintf("doc.go lists rule %q twice", e.id))
		}
		byID[e.id] = e
	}
	known := map[string]bool{}
	for _, r := range rules {
		known[r.ID] = true
		e, ok := byID[r.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("rule %q is in Rules() but missing from the doc.go table", r.ID))
			continue
		}
		for _, f := range []struct{ name, doc, want string }{
			{"title", e.title, r.Title},
			{"eras", e.eras, r.Eras},
			{"wire", e.wire, wireOf(r.Stages)},
			{"source", e.source, r.Source},
		} {
			if f.doc != f.want {
				problems = append(problems, fmt.Sprintf("rule %q: doc.go %s is %q, Rules() says %q", r.ID, f.name, f.doc, f.want))
			}
		}
	}
	for _, e := range entries {
		if !known[e.id] {
			problems = append(problems, fmt.Sprintf("doc.go lists rule %q (comment line %d), which Rules() does not have", e.id, e.line))
		}
	}
	if len(problems) == 0 {
		ids := func(n int, id func(int) string) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = id(i)
			}
			return out
		}
		if !slices.Equal(ids(len(rules), func(i int) string { return rules[i].ID }),
			ids(len(entries), func(i int) string { return entries[i].id })) {
			problems = append(problems, "doc.go lists the rules in another order than Rules()")
		}
	}
	return problems
}

// TestDocListsEveryRule fails when a rule of Rules() is missing from the
// doc.go table, when the table lists a rule that does not exist, or when
// a title, era range, wire code or source differs.
func TestDocListsEveryRule(t *testing.T) {
	entries, problems := parseDocTable(packageDoc(t))
	problems = append(problems, compareDoc(Rules(), entries)...)
	for _, p := range problems {
		t.Error(p)
	}
	if len(entries) != len(Rules()) {
		t.Errorf("doc.go lists %d rules, Rules() has %d", len(entries), len(Rules()))
	}
	if t.Failed() {
		t.Logf("the table doc.go should hold (each line behind \"//\"):\n%s", docBlock(Rules()))
	}
}

// TestDocCheckCatchesDrift makes sure the comparison is not vacuous: a
// dropped rule, an invented one and a changed field are all reported.
func TestDocCheckCatchesDrift(t *testing.T) {
	rules := Rules()
	entries, problems := parseDocTable(docBlock(rules))
	if len(problems) > 0 || len(compareDoc(rules, entries)) > 0 {
		t.Fatalf("the rendered table does not read back: %v %v", problems, compareDoc(rules, entries))
	}
	drifted := slices.Clone(entries[1:])                                   // the first rule is missing
	drifted = append(drifted, docEntry{id: "SMP-99.invented", title: "x"}) // a rule that does not exist
	drifted[0].eras = "2024-11-05"                                         // a wrong era range
	got := compareDoc(rules, drifted)
	for _, want := range []string{
		fmt.Sprintf("rule %q is in Rules() but missing", rules[0].ID),
		`doc.go lists rule "SMP-99.invented"`,
		fmt.Sprintf("rule %q: doc.go eras", rules[1].ID),
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem mentions %q; got %q", want, got)
		}
	}
}
