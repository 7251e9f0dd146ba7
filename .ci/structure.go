//go:build ignore

// structure prints the figures the codebase's shape is measured by, the
// same way before and after any change to it: per package, its non-test
// files and lines and the receiver type with the most methods; and the
// relay functions (and their files) a legacy sampling push passes, read
// from the coverage of relay's TestPushPathOnePush less that of
// TestPushPathToolCall (the same session with no push).
//
//	go run .ci/structure.go            # from the repository's root
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if err := packages(); err != nil {
		fail(err)
	}
	if err := pushPath(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "structure:", err)
	os.Exit(1)
}

// packages prints each package's files, lines and largest receiver.
func packages() error {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \",\"}}", "./...").Output()
	if err != nil {
		return err
	}
	fmt.Printf("%-52s %5s %6s  %s\n", "package", "files", "lines", "largest receiver (methods)")
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		files := strings.Split(f[2], ",")
		lines, recv, n, err := measure(f[1], files)
		if err != nil {
			return err
		}
		fmt.Printf("%-52s %5d %6d  %s (%d)\n", strings.TrimPrefix(f[0], "github.com/mcpx-fw/mcpx-fw"), len(files), lines, recv, n)
	}
	return nil
}

// measure counts the lines of files in dir and the methods of each
// receiver type, returning the largest.
func measure(dir string, files []string) (lines int, recv string, most int, err error) {
	methods := map[string]int{}
	fset := token.NewFileSet()
	for _, name := range files {
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return 0, "", 0, err
		}
		lines += bytes.Count(src, []byte("\n"))
		file, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return 0, "", 0, err
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
				methods[receiverName(fn.Recv.List[0].Type)]++
			}
		}
	}
	for r, n := range methods {
		if n > most || (n == most && r < recv) {
			recv, most = r, n
		}
	}
	return lines, recv, most, nil
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.IndexListExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// pushPath prints the relay functions one legacy sampling push passes.
func pushPath() error {
	base, err := covered("TestPushPathToolCall")
	if err != nil {
		return err
	}
	push, err := covered("TestPushPathOnePush")
	if err != nil {
		return err
	}
	var fns []string
	files := map[string]int{}
	pkgs := map[string]bool{}
	for fn := range push {
		if !base[fn] {
			fns = append(fns, fn)
			file := fn[:strings.LastIndex(fn, ":")]
			files[file]++
			pkgs[filepath.Dir(file)] = true
		}
	}
	slices.Sort(fns)
	fmt.Printf("\na legacy sampling push passes %d relay functions in %d files of %d packages:\n", len(fns), len(files), len(pkgs))
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		fmt.Printf("  %-48s %d\n", f, files[f])
	}
	return nil
}

// covered is the set of relay functions (file:func) test runs.
func covered(test string) (map[string]bool, error) {
	prof := filepath.Join(os.TempDir(), "structure-"+test+".cov")
	defer os.Remove(prof)
	cmd := exec.Command("go", "test", "-count=1", "-run", "^"+test+"$", "-coverpkg=./relay/...", "-coverprofile="+prof, "./relay/")
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", test, err, out)
	}
	out, err := exec.Command("go", "tool", "cover", "-func="+prof).Output()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] == "total:" || f[2] == "0.0%" {
			continue
		}
		file := strings.TrimPrefix(f[0][:strings.Index(f[0], ":")], "github.com/mcpx-fw/mcpx-fw/")
		set[file+":"+f[1]] = true
	}
	return set, nil
}
