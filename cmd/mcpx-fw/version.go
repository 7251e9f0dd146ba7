package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the module version this binary reports: in `mcpx-fw
// version`, as its serverInfo to hosts and upstreams, and as tracing's
// service.version. A release build may set it with -ldflags
// "-X main.version=v1.2.3"; left empty, init reads it from the build info.
var version string

func init() {
	if version == "" {
		version = readBuild().version
	}
}

// build is what the binary knows of the source it was built from, as the
// go command recorded it: go build and go install in a git clone stamp the
// commit; go run, -buildvcs=false (from the command line or GOFLAGS) and a
// linked git worktree stamp none, and an install of a published module
// names its source by the version alone.
type build struct {
	version   string // a tag, a pseudo-version, or "(devel)"
	revision  string // the commit; empty when none was stamped
	time      string // the commit's time
	modified  bool   // the tree had changes not committed
	goVersion string // the toolchain, and the GOOS/GOARCH it built for
	platform  string
}

func readBuild() build {
	b := build{version: "(devel)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.version = info.Main.Version
	}
	b.goVersion = info.GoVersion
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	b.platform = goos + "/" + goarch
	return b
}

// versionText is what `mcpx-fw version` and `mcpx-fw --version` print:
// the version, then one "key: value" line per fact the build recorded.
func versionText() string {
	b := readBuild()
	var sb strings.Builder
	fmt.Fprintf(&sb, "mcpx-fw %s\n", version)
	switch {
	case b.revision != "":
		fmt.Fprintf(&sb, "revision: %s%s\n", b.revision, modifiedNote(b.modified))
		fmt.Fprintf(&sb, "committed: %s\n", b.time)
	case version == "(devel)":
		sb.WriteString(revisionNotRecorded + "\n")
	}
	fmt.Fprintf(&sb, "go: %s %s\n", b.goVersion, b.platform)
	return sb.String()
}

// revisionNotRecorded is what version says of a build that recorded no
// commit: why, and the command that records one.
const revisionNotRecorded = "revision: not recorded (go run, a linked git worktree and -buildvcs=false, which go env GOFLAGS may hold, record none; " +
	"go install -buildvcs=true ./cmd/mcpx-fw in a git clone records it)"

func modifiedNote(modified bool) string {
	if modified {
		return " (modified: built with uncommitted changes)"
	}
	return ""
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from and the Go version",
		Long: `Print mcpx-fw's module version (a release tag, a pseudo-version naming the
commit, or "(devel)"), the commit it was built from and whether the tree had
uncommitted changes, and the Go version it was built with. mcpx-fw --version
prints the same.

The commit is recorded by go build and go install run in a git clone (a .git
folder: a linked git worktree has none) with git on PATH, unless -buildvcs is
false; go run never records it. GOFLAGS may hold -buildvcs=false, set in the
environment or by go env -w (go env GOFLAGS shows it); a flag on the command
line wins over it:

  go install -buildvcs=true ./cmd/mcpx-fw

records the commit in a clone, or fails saying why (git missing, say). An
empty GOFLAGS= in front is not enough when go env -w set it: the go command
reads an empty variable as unset.`,
		Args: args(0, "mcpx-fw version"),
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprint(c.OutOrStdout(), versionText())
		},
	}
}
