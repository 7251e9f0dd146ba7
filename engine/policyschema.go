package engine

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/util"
)

// schemasDir holds JSON Schemas at the top of a policy directory; its
// input.json describes the input document. It is not data.
const schemasDir = "schemas"

// inputSchemaFile is the input document's schema inside a policy
// directory, as a slash path.
const inputSchemaFile = schemasDir + "/input.json"

// policySchemas returns the schema set that types `input` when src ships
// schemas/input.json (nil otherwise), so loading a policy checks its input
// references as `opa check -s policies/schemas/input.json` does: a rule
// reading input.facts.max_token fails at start-up instead of never firing.
func policySchemas(src policySource) (*ast.SchemaSet, error) {
	b, path, err := src.readFile(inputSchemaFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var schema any
	if err == nil {
		err = util.Unmarshal(b, &schema)
	}
	if err != nil {
		return nil, fmt.Errorf("policy schema %s: %w", path, err)
	}
	ss := ast.NewSchemaSet()
	ss.Put(ast.SchemaRootRef, schema)
	return ss, nil
}
