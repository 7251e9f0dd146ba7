package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
)

// schemasDir holds JSON Schemas at the top of a policy directory; its
// input.json describes the input document. It is not data.
const schemasDir = "schemas"

// inputSchemaFile is the input document's schema inside a policy directory.
var inputSchemaFile = filepath.Join(schemasDir, "input.json")

// policySchemas returns the schema set that types `input` when dir ships
// schemas/input.json (nil otherwise), so loading a policy checks its input
// references as `opa check -s policies/schemas/input.json` does: a rule
// reading input.facts.max_token fails at start-up instead of never firing.
func policySchemas(dir string) (*ast.SchemaSet, error) {
	path := filepath.Join(dir, inputSchemaFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	ss, err := loader.Schemas(path)
	if err != nil {
		return nil, fmt.Errorf("policy schema %s: %w", path, err)
	}
	return ss, nil
}
