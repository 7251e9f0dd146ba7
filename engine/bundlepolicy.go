package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/mcpx-fw/mcpx-fw/policies"
)

// loadBundlePolicy compiles a verified bundle exactly as LoadPolicy
// compiles a directory (prepareDecision: strict, sandboxed, typed, with
// data.mcpxfw.config from the mcpx-fw config) and names its revision: the
// manifest's, or when the manifest has none the same short sha256 a
// directory gets over the modules and data.
func loadBundlePolicy(ctx context.Context, cfg PolicyConfig, where string, b *bundle.Bundle) (*Policy, error) {
	if len(b.WasmModules) > 0 || len(b.PlanModules) > 0 {
		return nil, fmt.Errorf("bundle %s carries wasm or plan modules, which mcpx-fw does not evaluate", where)
	}
	files := bundleFiles(b)
	p := &Policy{timeout: cfg.Timeout, revision: b.Manifest.Revision}
	if p.timeout == 0 {
		p.timeout = DefaultPolicyTimeout
	}
	var err error
	if p.revision == "" {
		if p.revision, err = policyRevision(".", files); err != nil {
			return nil, err
		}
	}
	rules, err := bundleRules(where)
	if err != nil {
		return nil, err
	}
	if p.query, err = prepareDecision(ctx, cfg, files, rules); err != nil {
		return nil, err
	}
	p.reasons = reasonsPreparer(cfg, files, rules)
	return p, nil
}

// bundleFiles is a bundle's modules and data in the loader's shape, with
// *_test.rego modules dropped as from a directory (`opa build -b
// policies` includes them; a test must never decide a live request).
// Module names lose the bundle's leading "/", so a bundle built inside a
// policy directory hashes as the directory does.
func bundleFiles(b *bundle.Bundle) *loader.Result {
	res := &loader.Result{Modules: map[string]*loader.RegoFile{}, Documents: b.Data}
	for _, m := range b.Modules {
		name := strings.TrimPrefix(m.Path, "/")
		if strings.HasSuffix(name, "_test.rego") {
			continue
		}
		res.Modules[name] = &loader.RegoFile{Name: name, Parsed: m.Parsed, Raw: m.Raw}
	}
	if res.Documents == nil {
		res.Documents = map[string]any{}
	}
	return res
}

// bundleRules are the shipped capabilities.json and input schema, always.
// `opa build -b` keeps only modules and data.json/data.yaml files, so a
// bundle carries neither; and the input schema is mcpx-fw's contract for
// the input it builds, not something a policy author chooses. Network
// builtins are removed as for a directory.
func bundleRules(where string) (compileRules, error) {
	rules, err := dirRules(policySource{fsys: policies.FS, root: "."})
	if err != nil {
		return compileRules{}, fmt.Errorf("shipped policy rules: %w", err)
	}
	rules.where = where
	return rules, nil
}
