package sandbox

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An entry point is a file or folder of the user's that some program of
// theirs runs as code, or reads to decide what to run, outside any sandbox:
// a shell's start-up file, an editor's configuration, a folder on PATH.
// An isolated command runs as the same user and could write one of them;
// the next time the operator opens a terminal, reviews an escalation with
// `review approve --edit` (which runs their editor, found on PATH) or logs
// in, what it wrote runs as them. An isolated command gets each that
// exists read-only (Spec.ReadOnly): it can read it, as any program may,
// but not change, replace, move or remove it.
//
// A name that does not exist cannot be covered without making it in the
// user's home, and making an empty one would change what the program
// reads (an empty ~/.bash_profile makes bash skip ~/.profile): callers
// report those as unguarded.

// homeEntries are the entry points in the home folder, and why each runs
// code as the user.
var homeEntries = []string{
	// Shells run these at login or in every new terminal.
	".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_logout",
	".bash_aliases", // sourced by Debian's and Ubuntu's ~/.bashrc
	".bashrc.d",     // sourced by Fedora's ~/.bashrc
	".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout",
	".inputrc", // readline's key bindings type text into the shell
	// What installers have those files source: rustup's, nvm's, fzf's,
	// Oh My Zsh.
	".cargo/env", ".nvm/nvm.sh", ".fzf.bash", ".fzf.zsh", ".oh-my-zsh",
	// The login session runs or reads these: environment (PATH, EDITOR,
	// LD_PRELOAD) for every process, and X session scripts.
	".pam_environment", ".xprofile", ".xsessionrc", ".xinitrc",
	// Editors the review CLI runs ($VISUAL, $EDITOR, vi) load these: an
	// autocommand could undo a redaction as the operator saves it.
	".vimrc", ".exrc", ".gvimrc", ".vim",
	".nanorc",
	".emacs", ".emacs.el", ".emacs.d",
	".vscode", ".vscode-server", // VS Code's extensions, which it runs (the second over Remote-SSH)
	// MCP hosts start the servers their config names (mcpx-fw serve
	// among them) outside any sandbox, and Claude Code runs the hooks of
	// its settings: Claude Code's, Cursor's, Windsurf's, Continue's,
	// Gemini CLI's, Codex's.
	".claude.json", ".claude", ".cursor", ".codeium", ".continue", ".gemini", ".codex",
	// git runs what its config names (core.pager, core.editor, hooks,
	// aliases starting with !).
	".gitconfig",
	// ssh runs ~/.ssh/rc at each login, authorized_keys lets a key in, and
	// config's ProxyCommand and LocalCommand run when the user connects.
	".ssh",
	// gpg-agent runs the pinentry its config names when the user signs
	// (a git commit, say).
	".gnupg",
	// npm and npx, which hosts start servers with, read node-options and
	// script-shell from it.
	".npmrc",
	// Folders a shell puts on PATH when they exist (~/.profile on Debian
	// and Ubuntu adds the first two; go install and rustup write the
	// others): a program there is found before the system's.
	"bin", ".local/bin", "go/bin", ".cargo/bin",
	// Python's user site-packages: its .pth files run at every python
	// start.
	".local/lib",
}

// configEntries are the entry points in the config home ($XDG_CONFIG_HOME,
// ~/.config by default).
var configEntries = []string{
	"fish",          // fish's start-up files and functions
	"systemd",       // the user manager's units and settings: started at login
	"autostart",     // the desktop session starts these at login
	"environment.d", // the user manager's environment (PATH, EDITOR)
	// Editors' configuration and plugins, as above: vim's, neovim's,
	// nano's, Emacs's, Helix's, Kakoune's, micro's, and VS Code's
	// settings, tasks and keybindings (its mcp.json too).
	"vim", "nvim", "nano", "emacs", "helix", "kak", "micro", "Code/User",
	"Claude", "zed", // MCP hosts' config, as above: Claude Desktop's, Zed's
	"git", // git's config, as ~/.gitconfig
}

// dataEntries are the entry points in the data home ($XDG_DATA_HOME,
// ~/.local/share by default).
var dataEntries = []string{
	"systemd/user", // user units, as in the config home
	"applications", // desktop entries, which shadow the system's: their Exec runs on a click
	"nvim",         // neovim's plugins (site, and plugin managers' folders)
}

// entryPoints are the user's entry points (see homeEntries, configEntries
// and dataEntries), as absolute paths, whether or not they exist: under
// $HOME, and under the config and data homes (both ~/.config and
// ~/.local/share and, where set elsewhere, $XDG_CONFIG_HOME and
// $XDG_DATA_HOME). Without a home there are none.
func entryPoints() []string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return nil
	}
	out := under(home, homeEntries)
	for _, dir := range xdgDirs(home, "XDG_CONFIG_HOME", ".config") {
		out = append(out, under(dir, configEntries)...)
	}
	for _, dir := range xdgDirs(home, "XDG_DATA_HOME", ".local/share") {
		out = append(out, under(dir, dataEntries)...)
	}
	return out
}

// xdgDirs is the default folder of an XDG variable under home and, when
// the variable names another absolute one, that one too: programs started
// with it and without it may both run.
func xdgDirs(home, name, def string) []string {
	dirs := []string{filepath.Join(home, def)}
	if v := os.Getenv(name); filepath.IsAbs(v) && filepath.Clean(v) != dirs[0] {
		dirs = append(dirs, filepath.Clean(v))
	}
	return dirs
}

func under(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// Unguarded is a path through which an isolated command could still have
// code run as the user, and why it is not kept read-only.
type Unguarded struct {
	Path string
	Why  string
}

// The reasons a path is not kept read-only, each naming the paths it
// applies to.
const (
	WhyMissing      = "entry points that do not exist, which an upstream could create"
	WhyRelativePath = "relative folders on PATH, which name whatever folder a program runs in"
	WhyHoldsHome    = "folders on PATH that hold the home, which upstreams must be able to write"
)

// OperatorPaths are the paths an isolated command should get read-only
// (Spec.ReadOnly): the entry points that exist (entryPoints), the folders
// on serve's PATH the user can write, and the paths of extra that exist;
// and the entry points, PATH folders and paths of extra that cannot be
// kept, with why: one that does not exist where the user could create it,
// and PATH folders that are relative or hold the home (pathFolders).
func OperatorPaths(extra []string) (readOnly []string, unguarded []Unguarded) {
	for _, p := range append(entryPoints(), extra...) {
		if _, err := os.Stat(p); err == nil {
			readOnly = append(readOnly, p)
		} else if creatable(p) {
			unguarded = append(unguarded, Unguarded{Path: p, Why: WhyMissing})
		}
	}
	dirs, more := pathFolders()
	return compact(append(readOnly, dirs...)), compact(append(unguarded, more...))
}

// pathFolders sorts the folders of serve's PATH: those the user can write
// (an isolated command runs as the user and could put a program there that
// the operator's shell finds first) are returned, absolute and cleaned, to
// be kept read-only; those that cannot be, with why. A folder that is the
// home or holds it cannot be made read-only without the home, a relative
// one names whatever folder a program is run from, and a missing one the
// user could create. Folders an isolated command has its own of (/tmp and
// the other private folders) are out of its reach already and left out.
func pathFolders() (writable []string, unguarded []Unguarded) {
	home, _ := os.UserHomeDir()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		clean := filepath.Clean(dir)
		switch {
		case !filepath.IsAbs(dir):
			unguarded = append(unguarded, Unguarded{Path: cmp.Or(dir, "."), Why: WhyRelativePath})
		case !exists(clean):
			if creatable(clean) {
				unguarded = append(unguarded, Unguarded{Path: clean, Why: WhyMissing})
			}
		case !Writable(clean):
		case filepath.IsAbs(home) && (clean == filepath.Clean(home) || within(home, clean)):
			unguarded = append(unguarded, Unguarded{Path: clean, Why: WhyHoldsHome})
		default:
			writable = append(writable, clean)
		}
	}
	return writable, unguarded
}

// creatable reports whether an isolated command could make p, which does
// not exist: the nearest folder above it that exists is Writable.
func creatable(p string) bool {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if exists(dir) {
			return Writable(dir)
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// within reports whether p is below dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// compact keeps the first of each, in order.
func compact[T comparable](list []T) []T {
	var out []T
	for _, v := range list {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
