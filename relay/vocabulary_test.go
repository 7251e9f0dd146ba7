package relay

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneVocabulary keeps every JSON-RPC error the firewall sends in
// package refusal: no file of relay (its test peers aside, which stand in
// for upstreams and hosts) writes a jsonrpc.Error literal, and no code
// decides anything by comparing an error's message text. The import rules'
// test (imports_test.go) holds the whole module to the first.
func TestOneVocabulary(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isSelector(n.Type, "jsonrpc", "Error") {
					t.Errorf("%s: a jsonrpc.Error literal outside package refusal; add a constructor there", fset.Position(n.Pos()))
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isField(n.X, "Message") || isField(n.Y, "Message")) {
					t.Errorf("%s: compares an error's message text; compare codes or sentinel values", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}

func isField(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name
}
