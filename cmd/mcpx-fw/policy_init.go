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

// initSkipped are shipped files policy init does not copy whole: the
// example server packages (copied only for a configured server of that
// name, see shippedPackage) and the Go file that embeds the folder.
var initSkipped = []string{"servers/", "embed.go"}

func policyInitCommand() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a policy folder to edit: the shipped framework and baseline, and a package per server",
		Long: `init writes a policy folder (default ./policies, relative to the working
folder) holding the framework and the baseline rules mcpx-fw ships (mcpxfw/,
capabilities.json, schemas/, the README of the policies) and, for every
server in the config (or one example server when it names none), a package
servers/NAME.rego with a test servers/NAME_test.rego: the shipped example
package as shipped when mcpx-fw has one for that name (everything,
github-mcp), else a commented package that decides as the shipped fallback
does. So the folder decides every request as the shipped policies did until
you edit it. 'mcpx-fw policy test DIR' and stock 'opa test DIR' pass on what
it writes.

It refuses to overwrite a file that exists; --force overwrites. A folder
named policies beside the config decides as soon as it is written, unless
the config sets policy.dir; any other folder decides once policy.dir names
it. init ends by saying which of these holds.`,
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
			printInitDone(c.OutOrStdout(), dir, files)
			// The config read again says what decides now: a policies
			// folder beside it decides as soon as it exists.
			now, err := config.Load(configFlag(c))
			if err != nil {
				return fmt.Errorf("policy init: wrote %s, then reading the config again failed: %w", dir, err)
			}
			printInitInEffect(c.OutOrStdout(), now, dir)
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite files that exist")
	return c
}

// initFiles is what policy init writes, by slash path under the folder:
// the shipped files but initSkipped, then a package and its test per
// server: the shipped one when there is one for its name, as the shipped
// policies decide with it, else the commented package, which decides as
// the shipped fallback. Either way the folder decides as the shipped
// policies did.
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
		shipped, err := shippedPackage(s.name)
		if err != nil {
			return nil, err
		}
		if shipped != nil {
			maps.Copy(files, shipped)
			continue
		}
		files["servers/"+s.name+".rego"] = serverPackage(s)
		files["servers/"+s.name+"_test.rego"] = serverPackageTest(s)
	}
	return files, nil
}

// shippedPackage is the shipped package for the server name and its test,
// by slash path, or nil when mcpx-fw ships none for that name. A name
// ending in _test names no package: the shipped NAME_test.rego files are
// tests, which never decide.
func shippedPackage(name string) (map[string][]byte, error) {
	if strings.HasSuffix(name, "_test") {
		return nil, nil
	}
	out := map[string][]byte{}
	for _, p := range []string{"servers/" + name + ".rego", "servers/" + name + "_test.rego"} {
		b, err := fs.ReadFile(policies.FS, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		out[p] = b
	}
	if out["servers/"+name+".rego"] == nil {
		return nil, nil
	}
	return out, nil
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

// printInitDone names the server packages written and what each is.
func printInitDone(w io.Writer, dir string, files map[string][]byte) {
	fmt.Fprintf(w, "wrote %d files to %s: the shipped framework and baseline (mcpxfw/) and a package per server:\n", len(files), dir)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		name, ok := strings.CutPrefix(p, "servers/")
		name, rego := strings.CutSuffix(name, ".rego")
		if !ok || !rego || strings.HasSuffix(name, "_test") {
			continue
		}
		what := "commented: decides as the shipped fallback until you edit it"
		if shipped, _ := shippedPackage(name); shipped != nil && slices.Equal(shipped[p], files[p]) {
			what = "the shipped example package for " + name + ", as shipped"
		}
		fmt.Fprintf(w, "  %s (%s)\n", filepath.Join(dir, filepath.FromSlash(p)), what)
	}
}

// printInitInEffect says which policy decides now, by the config as read
// after writing dir: dir itself (the policies folder beside the config, or
// the folder policy.dir names), or what still decides until policy.dir
// names dir; then what to do next.
func printInitInEffect(w io.Writer, cfg *config.Config, dir string) {
	abs := absPath(dir)
	next := "edit the packages, then run: mcpx-fw policy test " + dir
	decides := cfg.Policy.Dir != "" && absPath(cfg.Policy.Dir) == abs
	switch {
	case cfg.Policy.Bundle.URL != "":
		fmt.Fprintf(w, "in effect: the bundle from policy.bundle.url in %s decides, not %s\n", configName(cfg), dir)
		next = fmt.Sprintf("to use %s, remove policy.bundle and set policy.dir: %s, %s", dir, policyDirSetting(cfg, dir), next)
	case decides && cfg.Path() != "" && abs == absPath(filepath.Join(filepath.Dir(cfg.Path()), "policies")):
		fmt.Fprintf(w, "in effect: %s decides from now on (check says policy: folder %s): it is the policies folder beside %s, which decides unless the config sets policy.dir to another folder\n",
			dir, cfg.Policy.Dir, configName(cfg))
	case decides:
		fmt.Fprintf(w, "in effect: %s decides from now on: policy.dir names it\n", dir)
	default:
		fmt.Fprintf(w, "in effect: %s, not %s\n", deciding(cfg), dir)
		next = fmt.Sprintf("set policy.dir: %s in %s, %s", policyDirSetting(cfg, dir), configName(cfg), next)
	}
	fmt.Fprintf(w, "next: %s\n", next)
}

// absPath is p made absolute, or p when it cannot be.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// deciding names the policy the config decides with, as check does.
func deciding(cfg *config.Config) string {
	if cfg.Policy.Dir == "" {
		return "the shipped policies built into mcpx-fw decide (no policy.dir)"
	}
	return "the folder " + cfg.Policy.Dir + " decides"
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
