package hostconfig

import (
	"fmt"
	"strings"
	"testing"
)

// TestDiffHunks: a diff shows the changed lines with three lines around
// them, under the lines' numbers in each file, and nothing else of the
// file.
func TestDiffHunks(t *testing.T) {
	var old []string
	for i := 1; i <= 20000; i++ {
		old = append(old, fmt.Sprintf("line %d", i))
	}
	changed := append([]string(nil), old...)
	changed[9999] = "line ten thousand"
	changed = append(changed[:11000], append([]string{"new a", "new b"}, changed[11000:]...)...)
	got := Diff("f", []byte(strings.Join(old, "\n")+"\n"), []byte(strings.Join(changed, "\n")+"\n"))
	want := `--- f
+++ f
@@ -9997,7 +9997,7 @@
 line 9997
 line 9998
 line 9999
-line 10000
+line ten thousand
 line 10001
 line 10002
 line 10003
@@ -10998,6 +10998,8 @@
 line 10998
 line 10999
 line 11000
+new a
+new b
 line 11001
 line 11002
 line 11003
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	far := append(append([]string(nil), changed[:19000]...), "new c")
	far = append(far, changed[19000:]...)
	if got := Diff("f", []byte(strings.Join(old, "\n")), []byte(strings.Join(far, "\n"))); !strings.HasPrefix(got, "--- f\n+++ f\n@@ -9997,9005 +9997,9008 @@\n") {
		t.Errorf("changes too far apart for the table: %.200s", got)
	}
	if got := Diff("f", []byte("a\n"), []byte("a\n")); got != "" {
		t.Errorf("no change: %q", got)
	}
	if got := Diff("f", nil, []byte("x: 1\n")); got != "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x: 1\n" {
		t.Errorf("a new file: %q", got)
	}
}

// TestDiffProjectScope: the dry run of a project's connect in
// ~/.claude.json prints that project's entries, not the host's state.
func TestDiffProjectScope(t *testing.T) {
	data := readFixture(t, "claude-user.json")
	got, _ := project(t, "/home/me/src/shop").Connect(data, testServe)
	diff := Diff("claude.json", data, got)
	for _, secretish := range []string{"oauthAccount", "why does checkout time out?", "numStartups", "/home/me/src/blog"} {
		if strings.Contains(diff, secretish) {
			t.Errorf("the diff shows %q:\n%s", secretish, diff)
		}
	}
	if !strings.Contains(diff, `-          "command": "npx",`) {
		t.Errorf("diff:\n%s", diff)
	}
}
