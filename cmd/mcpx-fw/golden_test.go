package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// cmdGolden compares the last command's stdout, with ids, times and the
// work dir replaced by stable names, to testdata/golden/NAME; -update
// rewrites the file instead.
//
//	golden NAME
func cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: golden NAME")
	}
	got := normalize(ts.ReadFile("stdout"), ts.Getenv("WORK"))
	path := filepath.Join(goldenDir, args[0])
	if *update {
		ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
		ts.Check(os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	ts.Check(err)
	if got != string(want) {
		ts.Fatalf("stdout differs from %s (run go test -run TestScripts -update to accept):\n%s",
			path, render.LineDiff(string(want), got))
	}
}

// goldenDir is testdata/golden from this package's folder.
var goldenDir = filepath.Join("..", "..", "testdata", "golden")

var (
	reviewID   = regexp.MustCompile(`rv-[0-9a-f]{16}`)
	decisionID = regexp.MustCompile(`dc-[0-9a-f]{16}`)
	rfc3339    = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	timeLeft   = regexp.MustCompile(`\((\d+h)?(\d+m)?\d+(\.\d+)?s left\)`)
	clock      = regexp.MustCompile(`\d\d:\d\d:\d\d [A-Z]{3,4}`)
)

// normalize names ids in order of appearance (rv-1, dc-1, …) so that
// the golden files still show which ids are the same.
func normalize(s, work string) string {
	s = strings.ReplaceAll(s, work, "$WORK")
	s = numbered(reviewID, s, "rv-")
	s = numbered(decisionID, s, "dc-")
	s = rfc3339.ReplaceAllString(s, "<time>")
	s = timeLeft.ReplaceAllString(s, "(<left> left)")
	return clock.ReplaceAllString(s, "<clock>")
}

func numbered(re *regexp.Regexp, s, prefix string) string {
	names := map[string]string{}
	return re.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := names[id]; !ok {
			names[id] = fmt.Sprintf("%s%d", prefix, len(names)+1)
		}
		return names[id]
	})
}
