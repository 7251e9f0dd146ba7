// Package hostconfig reads and rewrites the MCP server lists of the hosts'
// own config files (Claude Desktop, Claude Code, VS Code, Cursor): which
// servers a host starts, the entry that starts one through mcpx-fw serve
// instead, and the disconnect that puts back the entries connect replaced
// (the file's bytes as they were, when nothing else changed). It touches
// only the members it names: every other key, the members' order and the
// file's spacing stay as they were. Standard library only.
//
// The formats, from the hosts' documentation:
//   - Claude Desktop: claude_desktop_config.json, "mcpServers" of
//     {command, args, env}; ~/Library/Application Support/Claude on macOS,
//     %APPDATA%\Claude on Windows, ~/.config/Claude on Linux
//     (https://explainmcp.com/mcp-servers/claude-desktop-config-json-guide,
//     https://automatelab.tech/blog/ai-coding/claude-code-mcp-config-file-location-format/).
//   - Claude Code: .mcp.json at the project's root (project scope), or
//     ~/.claude.json (user and local scope), "mcpServers" with "type"
//     stdio | http | sse (https://code.claude.com/docs/en/mcp, as quoted by
//     https://www.developersdigest.tech/mcp-servers/clients/claude-code).
//     Local scope is the same "mcpServers" under projects["/abs/dir"] of
//     ~/.claude.json, keyed by the project's absolute path
//     (https://code.claude.com/docs/en/mcp#mcp-installation-scopes, as
//     quoted by https://dev.to/aicoding-guide/claude-mcp-add-scope-local-vs-project-vs-user-and-which-to-pick-4ajm).
//   - VS Code: .vscode/mcp.json in the workspace (or mcp.json of the user
//     profile), a top-level "servers" object whose entries carry "type":
//     "stdio" with command, args, env, or "http" with url and headers
//     (https://code.visualstudio.com/docs/copilot/reference/mcp-configuration).
//     VS Code reads it as JSON with comments: // and /* */ comments and
//     trailing commas, as in its settings.json
//     (https://code.visualstudio.com/docs/languages/json#_json-with-comments).
//   - Cursor: ~/.cursor/mcp.json (global) or .cursor/mcp.json (project),
//     "mcpServers" of {command, args, env} or {url, headers}; no type
//     (https://www.developersdigest.tech/mcp-servers/clients/cursor, from
//     cursor.com/docs/mcp).
//
// Claude Desktop's, Claude Code's and Cursor's files are JSON, with no
// word of comments in their documentation: a comment or trailing comma in
// one is an error naming its line, not a file mcpx-fw would write back
// for a host that may refuse it.
package hostconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Host is one host's config format.
type Host struct {
	Name string
	// Key is the top-level member holding the servers.
	Key string
	// Typed hosts write "type" in every entry they start (stdio or http).
	Typed bool
	// JSONC hosts read their file as JSON with comments and trailing
	// commas.
	JSONC bool
	// path leads from the top of the file to the servers' object when it
	// is not the top-level Key: a Claude Code project's local scope.
	path []string
	// where is the usual file, relative to the home folder (home) or to
	// the working folder (the project's file).
	where func(goos, home, appData string) string
	home  bool
}

// Hosts are the hosts whose files this package reads, by name.
var Hosts = map[string]Host{
	"claude-desktop": {Name: "claude-desktop", Key: "mcpServers", where: claudeDesktop, home: true},
	// Claude Code's project file: ~/.claude.json also holds the host's own
	// state, which it rewrites as it runs (connect and disconnect touch
	// only the entries in it); named with --host-config, its top-level
	// (user-scope) servers are wired, and a project's (local scope) with
	// Project.
	"claude-code": {Name: "claude-code", Key: "mcpServers", Typed: true, where: fixed(".mcp.json")},
	"vscode":      {Name: "vscode", Key: "servers", Typed: true, JSONC: true, where: fixed(filepath.Join(".vscode", "mcp.json"))},
	"cursor":      {Name: "cursor", Key: "mcpServers", where: fixed(filepath.Join(".cursor", "mcp.json")), home: true},
}

// Lookup returns the host named, or an error naming the ones there are.
func Lookup(name string) (Host, error) {
	h, ok := Hosts[name]
	if !ok {
		return Host{}, fmt.Errorf("unknown host %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return h, nil
}

// UserFile is Claude Code's ~/.claude.json, relative to the home folder:
// its user scope and every project's local scope.
const UserFile = ".claude.json"

// Project is Claude Code's local scope of the project in dir (an absolute
// path, as ~/.claude.json keys it): the servers under
// projects[dir].mcpServers, in ~/.claude.json by default.
func (h Host) Project(dir string) (Host, error) {
	if h.Name != "claude-code" {
		return Host{}, fmt.Errorf("%s has no project scope in a file of the user's: only claude-code does", h.Name)
	}
	if !filepath.IsAbs(dir) {
		return Host{}, fmt.Errorf("project %q: not an absolute path", dir)
	}
	h.path = []string{"projects", dir, h.Key}
	h.where, h.home = fixed(UserFile), true
	return h, nil
}

// keys are the members leading to the servers' object.
func (h Host) keys() []string {
	if h.path != nil {
		return h.path
	}
	return []string{h.Key}
}

// Where names the servers' object in the file: "mcpServers", or
// projects["/abs/dir"].mcpServers.
func (h Host) Where() string {
	if h.path == nil {
		return h.Key
	}
	return fmt.Sprintf("projects[%q].%s", h.path[1], h.Key)
}

// Names lists the hosts, sorted.
func Names() []string {
	var names []string
	for n := range Hosts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DefaultPath is the host's usual config file on this system: under the
// home folder for the hosts that keep one per user, under the working
// folder for the ones that keep one per project.
func (h Host) DefaultPath() (string, error) {
	rel := h.where(runtime.GOOS, "", os.Getenv("APPDATA"))
	if !h.home {
		return filepath.Abs(rel)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: no home folder to find its config in: %w (name one with --host-config)", h.Name, err)
	}
	return h.where(runtime.GOOS, home, os.Getenv("APPDATA")), nil
}

func fixed(rel string) func(string, string, string) string {
	return func(_, home, _ string) string { return filepath.Join(home, rel) }
}

func claudeDesktop(goos, home, appData string) string {
	switch goos {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
	case "windows":
		if appData != "" {
			return filepath.Join(appData, "Claude", "claude_desktop_config.json")
		}
		return filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
	}
	return filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
}
