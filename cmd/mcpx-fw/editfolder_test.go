//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// editCase is one editor, as $EDITOR, that makes the form's message read
// "Kindly tell us" where it read "Please tell us".
type editCase struct{ name, editor string }

// editors save in each of the ways editors do: in place (nano, vim with
// backupcopy=yes), or by writing a new file and renaming it over the old
// (sed -i, vim with backupcopy=no, `code --wait` and most GUI editors).
func editors(t *testing.T) []editCase {
	const sub = `s/Please tell us/Kindly tell us/`
	cases := []editCase{
		{"sed -i (a new file renamed over)", `sed -i '` + sub + `'`},
		{"a new file renamed over, as code --wait saves", `f() { sed '` + sub + `' "$1" > "$1.new" && mv "$1.new" "$1"; }; f`},
		{"in place, as nano saves", `f() { c=$(sed '` + sub + `' "$1") && printf '%s\n' "$c" > "$1"; }; f`},
	}
	if _, err := exec.LookPath("vim"); err == nil {
		vim := `vim -Nu NONE -i NONE -es -c 'set nobackup writebackup backupcopy=%s' -c '%` + sub + `' -c wq`
		cases = append(cases, editCase{"vim, backupcopy=no (renames)", strings.Replace(vim, "%s", "no", 1)},
			editCase{"vim, backupcopy=yes (in place)", strings.Replace(vim, "%s", "yes", 1)})
	} else {
		t.Log("no vim on PATH: its cases are skipped")
	}
	return cases
}

// TestEditFolderEditors: approve --edit writes its document in the state
// dir's edits folder (0700, the document 0600), never in $TMPDIR; every
// way an editor saves is read back, the approval carries the edit and says
// so, and the document is removed; an editor that changes nothing
// approves the item as it was, saying the document came back unchanged.
func TestEditFolderEditors(t *testing.T) {
	for _, tt := range append(editors(t), editCase{"unchanged", "true"}) {
		t.Run(tt.name, func(t *testing.T) {
			cfg, st, it := pendingForm(t)
			t.Setenv("EDITOR", tt.editor)
			res := runCLI(t, "review", "approve", it.ID, "--edit", "--config", cfg)
			got, _ := st.Get(t.Context(), it.ID)
			want := "approved with your edit " + it.ID + " (decision "
			if tt.editor == "true" {
				want = "approved " + it.ID + " as it was: the edit document came back unchanged (decision "
			}
			if res.code != 0 || !strings.HasPrefix(res.stdout, want) || got.State != review.StateApproved {
				t.Fatalf("approve --edit: exit %d, %q, %s; the review is %s; want %q", res.code, res.stdout, res.stderr, got.State, want)
			}
			if edited := strings.Contains(string(got.Edited), "Kindly tell us"); edited != (tt.editor != "true") {
				t.Errorf("the approval carries %s", got.Edited)
			}
			checkEditFolder(t, cfg, nil)
			if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) > 0 {
				t.Errorf("TMPDIR holds %v", ents)
			}
		})
	}
}

// nameForm is a form the shipped policies let through once approved.
const nameForm = `{"mode":"form","message":"Please tell us your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Full name","maxLength":100}}}}`

// pendingForm is a pending elicitation form in a config of its own, with
// $EDITOR and TMPDIR (an empty folder of the test's) set for the CLI.
func pendingForm(t *testing.T) (string, *review.Store, review.Item) {
	t.Helper()
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 1000))
	st := openStore(t, cfg)
	it := rendertest.KindItem(t, "elicitation", nameForm, "")
	it.Context = json.RawMessage(`{"kind":"elicitation","server":{"name":"peer","label":"Test peer","protocol":"2025-11-25"},` +
		`"host":{"protocol":"2025-11-25","capabilities":{"elicitation":{"form":{}}}}}`)
	it, err := st.Add(t.Context(), it, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("VISUAL", "")
	return cfg, st, it
}

// checkEditFolder checks the edits folder of cfg's state dir is 0700 and
// holds exactly want (names), each 0600.
func checkEditFolder(t *testing.T, cfg string, want []string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(cfg), "state", editFolderName)
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the edits folder: %v, %v; want a folder, 0700", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
		if info, err := e.Info(); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want 0600", e.Name(), info, err)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the edits folder holds %v; want %v", got, want)
	}
}

// TestEditFolderReadBack: what approve --edit reads back must be the
// regular file the editor saved in the edits folder. An editor (or anyone)
// that leaves a symbolic link there, or a folder, has its document
// refused, and the review stays pending.
func TestEditFolderReadBack(t *testing.T) {
	elsewhere := writeFile(t, t.TempDir(), "forged.yaml", "message: Forged\nshape: x\n")
	for _, tt := range []struct{ name, editor, want string }{
		{"symbolic link", `ln -sf '` + elsewhere + `'`, "is not a regular file (L---------)"},
		{"folder", `f() { rm "$1" && mkdir "$1"; }; f`, "is not a regular file (d---------)"},
		{"removed", `rm`, "no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, st, it := pendingForm(t)
			t.Setenv("EDITOR", tt.editor)
			res := runCLI(t, "review", "approve", it.ID, "--edit", "--config", cfg)
			if res.code != 1 || !strings.Contains(res.stderr, "the edited document: ") || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("approve --edit: exit %d, %s; want 1 and %q", res.code, res.stderr, tt.want)
			}
			if got, _ := st.Get(t.Context(), it.ID); got.State != review.StatePending {
				t.Errorf("the review is %s; want pending", got.State)
			}
			checkEditFolder(t, cfg, nil)
		})
	}
}

// TestEditFolderRefusals: the edits folder is refused when it is a
// symbolic link (to a folder others could reach), when group or others may
// enter it, and when it is not the operator's: nothing is written there.
func TestEditFolderRefusals(t *testing.T) {
	tests := []struct {
		name, want string
		make       func(t *testing.T, dir string)
	}{
		{"symbolic link", "is not a folder (L---------); remove it", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"open to others", "is accessible by group or others (mode 0755); run: chmod 700 ", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name, want string
			make       func(t *testing.T, dir string)
		}{"another account's", "is not yours; remove it", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, st, it := pendingForm(t)
			dir := filepath.Join(filepath.Dir(cfg), "state", editFolderName)
			tt.make(t, dir)
			t.Setenv("EDITOR", "true")
			res := runCLI(t, "review", "approve", it.ID, "--edit", "--config", cfg)
			if res.code != 1 || !strings.Contains(res.stderr, "the edit folder "+dir+" ") || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("approve --edit: exit %d, %s; want 1 and %q", res.code, res.stderr, tt.want)
			}
			if got, _ := st.Get(t.Context(), it.ID); got.State != review.StatePending {
				t.Errorf("the review is %s; want pending", got.State)
			}
		})
	}
}

// TestEditFolderKeptEdit: a refused edit is kept in the edits folder,
// named in the refusal; fixed and given back with --edit-file, it is read
// as the editor's document is, approved, and removed.
func TestEditFolderKeptEdit(t *testing.T) {
	cfg, st, it := pendingForm(t)
	t.Setenv("EDITOR", `sed -i 's/"maxLength":100,/"maxLength":5000,/; s/Please tell us/Kindly tell us/'`)
	res := runCLI(t, "review", "approve", it.ID, "--edit", "--config", cfg)
	m := regexp.MustCompile(`Your edit is kept in (\S+); fix it and run: mcpx-fw review approve ` + it.ID + ` --edit-file (\S+)`).FindStringSubmatch(res.stderr)
	if res.code != 1 || m == nil || m[1] != m[2] {
		t.Fatalf("approve --edit: exit %d, %s; want the refusal naming the kept edit", res.code, res.stderr)
	}
	kept := m[1]
	if filepath.Dir(kept) != filepath.Join(filepath.Dir(cfg), "state", editFolderName) {
		t.Errorf("the edit is kept in %s; want a file of the state dir's edits folder", kept)
	}
	checkEditFolder(t, cfg, []string{filepath.Base(kept)})
	fixed, _ := exec.Command("sed", "-i", `s/"maxLength":5000,/"maxLength":100,/`, kept).CombinedOutput()
	if len(fixed) > 0 {
		t.Fatalf("sed: %s", fixed)
	}
	res = runCLI(t, "review", "approve", it.ID, "--edit-file", kept, "--config", cfg)
	got, _ := st.Get(t.Context(), it.ID)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "approved with your edit "+it.ID) || !strings.Contains(string(got.Edited), "Kindly tell us") {
		t.Fatalf("approve --edit-file: exit %d, %q, %s; approved %s", res.code, res.stdout, res.stderr, got.Edited)
	}
	checkEditFolder(t, cfg, nil)
}

// TestPruneEdits: review.retain removes the edit documents written before
// it, as it erases the queue's text, and keeps the newer ones; a retain of
// 0 keeps them all, and a state dir without an edit folder gets none.
func TestPruneEdits(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if n, err := pruneEdits(state, time.Hour); n != 0 || err != nil {
		t.Fatalf("no edit folder: pruned %d, %v", n, err)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("pruning made the state dir")
	}
	f, err := openEditFolder(state)
	if err != nil {
		t.Fatal(err)
	}
	old, err := f.create("rv-old-", []byte("prompt text"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := f.create("rv-new-", []byte("prompt text"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	then := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(state, editFolderName, old), then, then); err != nil {
		t.Fatal(err)
	}
	if n, err := pruneEdits(state, 0); n != 0 || err != nil {
		t.Errorf("retain 0: pruned %d, %v; want none", n, err)
	}
	if n, err := pruneEdits(state, time.Hour); n != 1 || err != nil {
		t.Errorf("pruned %d, %v; want the one written two hours ago", n, err)
	}
	for name, want := range map[string]bool{old: false, fresh: true} {
		if _, err := os.Stat(filepath.Join(state, editFolderName, name)); (err == nil) != want {
			t.Errorf("%s there: %v, want %v", name, err == nil, want)
		}
	}
}
