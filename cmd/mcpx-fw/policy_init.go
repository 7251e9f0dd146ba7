package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/policies"
)

// initExample is the server a package is written for when the config
// names none.
const initExample = "example"

// initSkipped are shipped files policy init does not copy: the example
// server packages (a team's servers get packages of their own) and the Go
// file that embeds the folder.
var initSkipped = []string{"servers/", "embed.go"}

func policyInitCommand() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a policy folder to edit: the shipped framework and baseline, and a package per server",
		Long: `init writes a policy folder (default ./policies, relative to the working
folder) holding the framework and the baseline rules mcpx-fw ships (mcpxfw/,
capabilities.json, schemas/, the README of the policies) and, for every
server in the config (or one example server when it names none), a
commented package servers/NAME.rego with a test servers/NAME_test.rego.
Each package decides as the shipped fallback does until you edit it.
'mcpx-fw policy test DIR' and stock 'opa test DIR' pass on what it writes.

It refuses to overwrite a file that exists; --force overwrites. Then set
policy.dir in the config to the folder.`,
		Example: `  mcpx-fw policy init
  mcpx-fw policy init --config mcpx-fw.yaml rules`,
		Args: func(c *cobra.Command, a []string) error {
			if len(a) > 1 {
				return usageError{fmt.Errorf("%s takes at most 1 argument, got %d\nTry: mcpx-fw policy init [DIR]", c.CommandPath(), len(a))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, a []string) error {
			dir := "policies"
			if len(a) == 1 {
				dir = a[0]
			}
			cfg, err := config.Load(configFlag(c))
			if err != nil {
				return err
			}
			files, err := initFiles(cfg)
			if err != nil {
				return err
			}
			if err := writeInitFiles(dir, files, force); err != nil {
				return err
			}
			printInitDone(c.OutOrStdout(), cfg, dir, files)
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite files that exist")
	return c
}

// initFiles is what policy init writes, by slash path under the folder:
// the shipped files but initSkipped, then a package and its test per
// server.
func initFiles(cfg *config.Config) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || initSkips(p) {
			return err
		}
		files[p], err = fs.ReadFile(policies.FS, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, s := range initServers(cfg) {
		files["servers/"+s.name+".rego"] = serverPackage(s)
		files["servers/"+s.name+"_test.rego"] = serverPackageTest(s)
	}
	return files, nil
}

func initSkips(p string) bool {
	return slices.ContainsFunc(initSkipped, func(skip string) bool {
		return p == skip || strings.HasSuffix(skip, "/") && strings.HasPrefix(p, skip)
	})
}

// initServer is a server a package is written for.
type initServer struct{ name, label string }

// initServers are the config's servers by name, or the one example.
func initServers(cfg *config.Config) []initServer {
	if len(cfg.Servers) == 0 {
		return []initServer{{initExample, "an example server: rename the file and the package after a server of your config"}}
	}
	var out []initServer
	for name, s := range cfg.Servers {
		out = append(out, initServer{name, s.Label})
	}
	slices.SortFunc(out, func(a, b initServer) int { return strings.Compare(a.name, b.name) })
	return out
}

// writeInitFiles writes files under dir; unless force, it first refuses
// when any of them exists, so nothing is half written over.
func writeInitFiles(dir string, files map[string][]byte, force bool) error {
	names := slices.Sorted(maps.Keys(files))
	if !force {
		for _, p := range names {
			target := filepath.Join(dir, filepath.FromSlash(p))
			if _, err := os.Lstat(target); err == nil || !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("policy init: %s exists; --force overwrites it", target)
			}
		}
	}
	for _, p := range names {
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("policy init: %w", err)
		}
		if err := os.WriteFile(target, files[p], 0o644); err != nil {
			return fmt.Errorf("policy init: %w", err)
		}
	}
	return nil
}

// printInitDone names the server packages written and what to do next.
func printInitDone(w io.Writer, cfg *config.Config, dir string, files map[string][]byte) {
	fmt.Fprintf(w, "wrote %d files to %s: the shipped framework and baseline (mcpxfw/) and a package per server:\n", len(files), dir)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if strings.HasPrefix(p, "servers/") && !strings.HasSuffix(p, "_test.rego") {
			fmt.Fprintf(w, "  %s\n", filepath.Join(dir, filepath.FromSlash(p)))
		}
	}
	fmt.Fprintf(w, "next: set policy.dir: %s in %s, edit the packages, then run: mcpx-fw policy test %s\n",
		policyDirSetting(cfg, dir), configName(cfg), dir)
}

// policyDirSetting is dir as the config's policy.dir reads it: relative to
// the config's folder when inside it, else absolute.
func policyDirSetting(cfg *config.Config, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	base, err := filepath.Abs(filepath.Dir(configName(cfg)))
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(rel)
	}
	return abs
}

// configName is the config file read, or the one serve would read.
func configName(cfg *config.Config) string {
	if cfg.Path() != "" {
		return cfg.Path()
	}
	return "mcpx-fw.yaml"
}
