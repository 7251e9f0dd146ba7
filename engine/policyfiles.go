package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
)

// decisionRef is the one document mcpx-fw asks the policy for.
var decisionRef = ast.MustParseRef("data.mcpxfw.decision")

// policyExtensions are the files a policy directory contributes: modules and
// the data formats stock `opa test` and `opa eval -d` also load, so a data
// file never counts in one and is silently ignored by the other.
var policyExtensions = []string{".rego", ".json", ".yaml", ".yml"}

// policyFilter is the loader filter (true means skip) for policy
// directories: hidden entries, files of other kinds, the capabilities
// document and the schemas folder at the top (configuration, not data) and,
// unless withTests,
// *_test.rego files, which must never decide a live request.
func policyFilter(withTests bool) loader.Filter {
	return func(_ string, info fs.FileInfo, depth int) bool {
		name := info.Name()
		switch {
		case depth == 0:
			return false
		case strings.HasPrefix(name, "."):
			return true
		case depth == 1 && name == schemasDir && info.IsDir():
			return true
		case info.IsDir():
			return false
		case depth == 1 && name == capabilitiesFile:
			return true
		case strings.HasSuffix(name, "_test.rego"):
			return !withTests
		}
		return !slices.Contains(policyExtensions, filepath.Ext(name))
	}
}

// requirePolicyDir fails unless path is a readable directory; the os error
// names the path.
func requirePolicyDir(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}

// requireDecision fails unless some module defines data.mcpxfw.decision, so
// pointing mcpx-fw at the wrong directory stops it at start-up instead of
// failing every request.
func requireDecision(dir string, res *loader.Result) error {
	for _, file := range res.Modules {
		for _, rule := range file.Parsed.Rules {
			if rule.Path().Equal(decisionRef) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s defines no %s: the composition (package mcpxfw, mcpxfw/main.rego) is missing", dir, decisionRef)
}

// policyRevision names what was loaded: a short sha256 over each module's
// path (relative to dir, so the revision does not depend on where mcpx-fw
// runs) and exact bytes, then the loaded data documents as canonical JSON.
func policyRevision(dir string, res *loader.Result) (string, error) {
	h := sha256.New()
	for _, key := range slices.Sorted(maps.Keys(res.Modules)) {
		file := res.Modules[key]
		fmt.Fprintf(h, "%s\x00%d\x00", policyRelPath(dir, file.Name), len(file.Raw))
		h.Write(file.Raw)
	}
	docs, err := json.Marshal(res.Documents)
	if err != nil {
		return "", fmt.Errorf("policy data: %w", err)
	}
	h.Write(docs)
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// policyRelPath is path relative to dir with forward slashes. Both come
// from the same walk, so Rel cannot fail in practice; path is the fallback.
func policyRelPath(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = path
	}
	return filepath.ToSlash(rel)
}

// policyStore holds the directory's data plus the mcpx-fw configuration at
// data.mcpxfw.config. The configuration is copied through JSON, so later
// changes to the caller's map cannot reach a loaded policy.
func policyStore(docs, config map[string]any) (storage.Store, error) {
	data := maps.Clone(docs)
	if data == nil {
		data = map[string]any{}
	}
	if config == nil {
		return inmem.NewFromObject(data), nil
	}
	var copied any = config
	if err := util.RoundTrip(&copied); err != nil {
		return nil, fmt.Errorf("policy configuration: %w", err)
	}
	ns, err := configNamespace(data["mcpxfw"])
	if err != nil {
		return nil, err
	}
	ns["config"] = copied
	data["mcpxfw"] = ns
	return inmem.NewFromObject(data), nil
}

// configNamespace copies the data a policy directory put under data.mcpxfw,
// refusing a data.mcpxfw.config of its own: the configuration has one
// source, not two resolved silently.
func configNamespace(existing any) (map[string]any, error) {
	if existing == nil {
		return map[string]any{}, nil
	}
	m, ok := existing.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy data: data.mcpxfw is %T, not an object", existing)
	}
	if _, taken := m["config"]; taken {
		return nil, errors.New("policy data: data.mcpxfw.config comes from the mcpx-fw configuration; remove it from the policy directory")
	}
	return maps.Clone(m), nil
}
