package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	goruntime "runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// editItem asks the operator for their version of a pending item: in an
// editor, or from file. It returns nil when nothing changed, which makes
// the approval a plain one.
func editItem(c *cobra.Command, it review.Item, file string) (*review.Edit, error) {
	original := editable(it)
	doc, err := editDoc(it, original)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.ID, err)
	}
	buf, err := readEdit(c, it, doc, file)
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("%s: %w; the review is still pending", it.ID, err))
	}
	if len(bytes.TrimSpace(buf)) == 0 {
		return nil, withCode(exitFailure, fmt.Errorf("%s: approval cancelled (the edit is empty); the review is still pending", it.ID))
	}
	if bytes.Equal(buf, doc) {
		return nil, nil
	}
	value, err := applyEdit(it, original, buf)
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("%s: the edit is refused: %w; the review is still pending", it.ID, err))
	}
	if equalJSON(value, original) {
		return nil, nil
	}
	before, err := editBody(it, original)
	if err != nil {
		return nil, err
	}
	after, err := editBody(it, value)
	if err != nil {
		return nil, err
	}
	return &review.Edit{Value: value, Diff: lineDiff(string(before), string(after))}, nil
}

// editable is what an edit replaces: the request, or at the result stage
// the completion.
func editable(it review.Item) json.RawMessage {
	if it.Stage == review.StageResult {
		return it.Result
	}
	return it.Request
}

// readEdit returns the edited document: file's content ("-" for stdin), or
// what the operator saved in their editor.
func readEdit(c *cobra.Command, it review.Item, doc []byte, file string) ([]byte, error) {
	switch file {
	case "":
		return editInEditor(it, doc)
	case "-":
		return io.ReadAll(c.InOrStdin())
	}
	return os.ReadFile(file)
}

// editInEditor writes doc to a private temporary file, opens the editor on
// it and reads it back. The file holds prompt text, so it is 0600 and
// removed afterwards.
func editInEditor(it review.Item, doc []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "mcpx-fw-"+it.ID+"-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(doc)
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, err
	}
	if err := editorCommand(f.Name()).Run(); err != nil {
		return nil, fmt.Errorf("the editor failed: %w", err)
	}
	return os.ReadFile(f.Name())
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

func equalJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
