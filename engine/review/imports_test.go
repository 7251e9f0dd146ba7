package review

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStayOutside guards the dependency direction: engine, relay and
// cmd use this package, so it may import only the standard library, the
// SQLite and PostgreSQL (pgx) drivers and zap (tests may add go-cmp, and examples this package), never mcpx-fw or the MCP SDK.
func TestImportsStayOutside(t *testing.T) {
	allowed := []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5", "go.uber.org/zap"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		ok := allowed
		if strings.HasSuffix(name, "_test.go") {
			ok = append(ok, "github.com/google/go-cmp", "github.com/mcpx-fw/mcpx-fw/engine/review")
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowedImport(path, ok) {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

func allowedImport(path string, allowed []string) bool {
	if !strings.Contains(strings.Split(path, "/")[0], ".") {
		return true // standard library
	}
	for _, a := range allowed {
		if path == a || strings.HasPrefix(path, a+"/") {
			return true
		}
	}
	return false
}
