package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// editItem asks the operator for their version of a pending item: in an
// editor, or from file. It returns nil when nothing changed, which makes
// the approval a plain one. An edit made in the editor is kept in its file
// of the edit folder (editfolder.go), in stateDir, until the approval is
// done: kept is that file's path, which the caller removes once approved
// (and names, with keepEdit, when it refuses). A refused edit is never
// lost; given back with --edit-file, it is read as the editor's is, and
// removed once approved.
func editItem(c *cobra.Command, stateDir string, it review.Item, file string) (e *review.Edit, kept string, err error) {
	if err := render.EditRefusal(it); err != nil {
		return nil, "", withCode(exitFailure, err)
	}
	original := render.Editable(it)
	doc, err := render.EditDoc(it, original)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", it.ID, err)
	}
	buf, kept, err := readEdit(c, stateDir, it, doc, file)
	if err != nil {
		return nil, "", withCode(exitFailure, fmt.Errorf("%s: %w; the review is still pending", it.ID, err))
	}
	unchanged := func() (*review.Edit, string, error) {
		if kept != "" {
			os.Remove(kept)
		}
		return nil, "", nil
	}
	if len(bytes.TrimSpace(buf)) == 0 {
		unchanged()
		return nil, "", withCode(exitFailure, fmt.Errorf("%s: approval cancelled (the edit is empty); the review is still pending", it.ID))
	}
	if bytes.Equal(buf, doc) {
		return unchanged()
	}
	value, err := render.ApplyEdit(it, original, buf)
	if err != nil {
		return nil, "", keepEdit(withCode(exitFailure, fmt.Errorf("%s: the edit is refused: %w; the review is still pending", it.ID, err)), it, kept)
	}
	if render.EqualJSON(value, original) {
		return unchanged()
	}
	if e, err = editDiff(it, original, value); err != nil {
		return nil, "", keepEdit(err, it, kept)
	}
	return e, kept, nil
}

// editDiff is the edit that replaces original with value, with the line
// diff of their documents that show prints.
func editDiff(it review.Item, original, value json.RawMessage) (*review.Edit, error) {
	before, err := render.EditBody(it, original)
	if err != nil {
		return nil, err
	}
	after, err := render.EditBody(it, value)
	if err != nil {
		return nil, err
	}
	return &review.Edit{Value: value, Diff: render.LineDiff(string(before), string(after))}, nil
}

// keepEdit adds to err where the operator's refused edit is kept and how
// to try it again.
func keepEdit(err error, it review.Item, kept string) error {
	if kept == "" {
		return err
	}
	return fmt.Errorf("%w\nYour edit is kept in %s; fix it and run: mcpx-fw review approve %s --edit-file %s", err, kept, it.ID, kept)
}

// readEdit returns the edited document: file's content ("-" for stdin), or
// what the operator saved in their editor, with the path of the file of
// the edit folder that keeps it.
func readEdit(c *cobra.Command, stateDir string, it review.Item, doc []byte, file string) ([]byte, string, error) {
	if file == "-" {
		b, err := io.ReadAll(c.InOrStdin())
		return b, "", err
	}
	folder, err := openEditFolder(stateDir)
	if err != nil {
		return nil, "", err
	}
	defer folder.Close()
	if file == "" {
		return editInEditor(folder, it, doc)
	}
	if name, ok := folder.holds(file); ok {
		b, err := folder.read(name)
		return b, file, err
	}
	b, err := os.ReadFile(file)
	return b, "", err
}

// editInEditor writes doc to a new file of the edit folder, opens the
// editor on it and reads back what the editor saved there. The file is
// removed when the editor fails or what it left cannot be read, else kept
// for the caller (see editItem).
func editInEditor(folder *editFolder, it review.Item, doc []byte) ([]byte, string, error) {
	name, err := folder.create("mcpx-fw-"+it.ID+"-", doc)
	if err != nil {
		return nil, "", err
	}
	if err := editorCommand(folder.name(name)).Run(); err != nil {
		folder.remove(name)
		return nil, "", fmt.Errorf("the editor failed: %w", err)
	}
	b, err := folder.read(name)
	if err != nil {
		folder.remove(name)
		return nil, "", fmt.Errorf("the edited document: %w", err)
	}
	return b, folder.name(name), nil
}

// editorCommand runs $VISUAL, else $EDITOR, else vi on path, attached to
// the terminal. The variable is run by the shell, as git does, so values
// like "code --wait" work.
func editorCommand(path string) *exec.Cmd {
	editor := "vi"
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := strings.TrimSpace(os.Getenv(v)); e != "" {
			editor = e
			break
		}
	}
	var cmd *exec.Cmd
	if goruntime.GOOS == "windows" {
		f := strings.Fields(editor)
		cmd = exec.Command(f[0], append(f[1:], path)...)
	} else {
		cmd = exec.Command("sh", "-c", editor+` "$1"`, "mcpx-fw-editor", path)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd
}
