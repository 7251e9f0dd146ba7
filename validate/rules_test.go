package validate

import (
	"go/ast"
	"go/constant"
	"go/importer"
	goparser "go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

func TestTitles(t *testing.T) {
	tests := []struct{ rule, want string }{
		// The spec's own phrases (S1125 §Error Handling); upstreams may match on them.
		{"SMP-06.pairing", "Tool result missing in request"},
		{"SMP-06.mixed", "Tool results mixed with other content"},
		{"SMP-02.role", "Invalid message role"},
		{"SMP-03.max-tokens", "maxTokens must be a positive integer"},
		{"no.such-rule", "Invalid sampling request"},
		{"", "Invalid sampling request"},
	}
	for _, tt := range tests {
		if got := Title(tt.rule); got != tt.want {
			t.Errorf("Title(%q) = %q, want %q", tt.rule, got, tt.want)
		}
	}
}

func TestRulesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("rule %q listed twice", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Eras == "" || r.Source == "" {
			t.Errorf("rule %q has an empty field: %+v", r.ID, r)
		}
		if r.Stages != stReq && r.Stages != stRes && r.Stages != stBoth {
			t.Errorf("rule %q: stages %q, want %q, %q or %q", r.ID, r.Stages, stReq, stRes, stBoth)
		}
		erasOf(t, r) // fails on a malformed era list
		if strings.ContainsAny(r.Title, "\n\"") || len(r.Title) > 60 {
			t.Errorf("rule %q: title %q should be one short plain phrase", r.ID, r.Title)
		}
	}
	rs := Rules()
	rs[0].ID = "changed"
	if Rules()[0].ID == "changed" {
		t.Error("Rules returns the table itself, not a copy")
	}
}

// TestRuleIDsInCodeAreListed type-checks the package and looks at every
// constant of type ruleID, declared or used anywhere: each must be in the
// rule table. With add taking a ruleID, this catches an id that no fixture
// reaches yet.
func TestRuleIDsInCodeAreListed(t *testing.T) {
	fset, info := typeCheckPackage(t)
	checked := 0
	check := func(pos token.Pos, typ types.Type, val constant.Value) {
		if val == nil || val.Kind() != constant.String || !isRuleID(typ) {
			return
		}
		checked++
		if id := constant.StringVal(val); !listed(ruleID(id)) {
			t.Errorf("%s: rule id %q is not in the rule table", fset.Position(pos), id)
		}
	}
	for expr, tv := range info.Types {
		check(expr.Pos(), tv.Type, tv.Value)
	}
	for ident, obj := range info.Defs {
		if c, ok := obj.(*types.Const); ok {
			check(ident.Pos(), c.Type(), c.Val())
		}
	}
	if checked < len(Rules()) {
		t.Errorf("found %d ruleID constants, fewer than the %d rules listed", checked, len(Rules()))
	}
}

// typeCheckPackage parses and type-checks the package's non-test files.
func typeCheckPackage(t *testing.T) (*token.FileSet, *types.Info) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("validate", fset, files, info); err != nil {
		t.Fatal(err)
	}
	return fset, info
}

func isRuleID(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "ruleID"
}
