package main

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// TestDemoPolicyFolderHoldsOnlyPolicies: the policy folder the demo
// writes (and --keep leaves) holds the shipped Rego, its JSON and its
// README, never the Go source that embeds them.
func TestDemoPolicyFolderHoldsOnlyPolicies(t *testing.T) {
	dir := t.TempDir()
	if err := extractPolicies(dir); err != nil {
		t.Fatal(err)
	}
	rego := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".rego":
			rego++
		case ".json", ".md":
		default:
			t.Errorf("the demo's policy folder holds %s", p)
		}
		return nil
	})
	if err != nil || rego == 0 {
		t.Errorf("walk: %v; %d Rego files, want the shipped ones", err, rego)
	}
}
