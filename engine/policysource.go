package engine

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
)

// ShippedPolicyName is how messages and PolicyStatus name a policy read from
// PolicyConfig.FS (the set embedded in the binary) rather than a folder.
const ShippedPolicyName = "the shipped policies (embedded)"

// policySource is where a policy's files are read: a folder on disk (fsys
// nil, root the folder) or a file system such as the set embedded in the
// binary (root "."). Every load, directory or embedded, goes through the
// same loader, filter and compile steps; only the reads differ.
type policySource struct {
	fsys fs.FS
	root string
}

// sourceOf is cfg's Dir, or its FS when no Dir is given.
func sourceOf(cfg PolicyConfig) policySource {
	if cfg.Dir == "" && cfg.FS != nil {
		return policySource{fsys: cfg.FS, root: "."}
	}
	return policySource{root: cfg.Dir}
}

// name is what messages call the source.
func (s policySource) name() string {
	if s.fsys != nil {
		return ShippedPolicyName
	}
	return s.root
}

// kind is the source's PolicyStatus.Source word.
func (s policySource) kind() string {
	if s.fsys != nil {
		return SourceEmbedded
	}
	return SourceDir
}

// check fails unless the source can be read: a folder must exist and be
// one.
func (s policySource) check() error {
	if s.fsys != nil {
		return nil
	}
	return requirePolicyDir(s.root)
}

// readFile reads a file named by its slash path under the source; the
// error wraps fs.ErrNotExist when it is absent. path names it for messages.
func (s policySource) readFile(name string) (b []byte, path string, err error) {
	if s.fsys != nil {
		b, err = fs.ReadFile(s.fsys, name)
		return b, name, err
	}
	path = filepath.Join(s.root, filepath.FromSlash(name))
	b, err = os.ReadFile(path)
	return b, path, err
}

// load parses the source's policy files (tests too when withTests) under
// caps, nil for the loader's default. Parse errors name the file and line.
func (s policySource) load(withTests bool, caps *ast.Capabilities) (*loader.Result, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return loadFiles(s.fsys, []string{s.root}, withTests, caps)
}

// loadFiles is OPA's loader over roots in fsys (nil: the disk), filtered
// as a policy directory is.
func loadFiles(fsys fs.FS, roots []string, withTests bool, caps *ast.Capabilities) (*loader.Result, error) {
	l := loader.NewFileLoader().
		WithFS(fsys).
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotation(true)
	if caps != nil {
		l = l.WithCapabilities(caps)
	}
	return l.Filtered(roots, policyFilter(withTests))
}
