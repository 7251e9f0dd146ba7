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
// SQLite and PostgreSQL (pgx) drivers, zap and its own parts under
// internal/ (tests may add go-cmp, and examples this package), never the
// rest of mcpx-fw or the MCP SDK.
func TestImportsStayOutside(t *testing.T) {
	allowed := []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5", "go.uber.org/zap", module + "/engine/review/internal"}
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

// module is this repository's module path.
const module = "github.com/mcpx-fw/mcpx-fw"

// TestPartsNeverImportTheStore: a part that is a package of its own
// (internal/...) knows nothing of the store, so it imports no mcpx-fw
// package at all, this one least of all.
func TestPartsNeverImportTheStore(t *testing.T) {
	files, err := filepath.Glob("internal/*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no parts found under internal/ (%v)", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, module+"/") {
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
