package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

func hostCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "host",
		Short: "Wire a host's MCP servers through mcpx-fw (import, connect, disconnect)",
		Long: `Wire a host's own MCP servers through mcpx-fw. HOST is one of
` + strings.Join(hostconfig.Names(), ", ") + `.

  import      adds the host's servers to mcpx-fw's config (--config, else
              $MCPXFW_CONFIG, else mcpx-fw.yaml here; made if missing)
  connect     imports them, then rewrites the host's file so each server
              starts as 'mcpx-fw serve --config CONFIG --server NAME': the
              host lists the same servers and tool names, and none bypasses
              the firewall. The file as it was is kept in FILE.mcpx-fw.bak
              (mode 0600: it holds the entries' keys and tokens)
  disconnect  puts back the entries connect rewrote in the scope, with their
              bytes from FILE.mcpx-fw.bak, and leaves every other byte of
              the file as it is now (what the host wrote since, another
              scope's entries): a file as connect left it gets its bytes
              from before connect back. An entry changed or removed since
              connect stops it, naming FILE:LINE; --force restores the
              whole backup instead (every change since connect is lost).
              The backup is removed once no scope of the file needs it

The host's file is its usual one unless --host-config names another:
claude-desktop  claude_desktop_config.json in Claude's folder:
                ~/Library/Application Support/Claude on macOS,
                %APPDATA%\Claude on Windows, ~/.config/Claude on Linux
                (where the unofficial Linux builds keep it; Anthropic ships
                none); another install's file: name it with --host-config
claude-code     .mcp.json in the working folder (project scope); with
                --project DIR, ~/.claude.json's projects["DIR"].mcpServers
                (local scope: DIR made absolute); ~/.claude.json named with
                --host-config and no --project: its top-level mcpServers
                (user scope)
vscode          .vscode/mcp.json in the working folder (the workspace's)
cursor          ~/.cursor/mcp.json

VS Code's file may hold comments and trailing commas (JSON with comments):
connect rewrites only the servers' entries, so every comment outside them
stays. The other hosts read strict JSON: a comment or trailing comma in
their file is an error naming FILE:LINE.

--dry-run prints what would change, as a diff, and changes nothing; every
env and header value in it is shown as «hidden: N characters». A file
written that holds a key or token (the config, the backup) inside a git
work tree and not ignored by git gets a warning naming what to add to
.gitignore. connect writes absolute paths into the host's file: do not
commit a connected .vscode/mcp.json or .mcp.json; each teammate connects.
Restart the host (or reload its servers) after connect and disconnect.`,
	}
	c.AddCommand(hostImportCommand(), hostConnectCommand(), hostDisconnectCommand())
	return c
}

func hostImportCommand() *cobra.Command {
	return hostSub("import", "Add a host's servers to mcpx-fw's config", func(w io.Writer, hf hostFile, cfg string, dry bool) error {
		_, err := importHost(w, hf, cfg, dry)
		return err
	})
}

func hostConnectCommand() *cobra.Command {
	return hostSub("connect", "Import a host's servers and start each through mcpx-fw serve", connectHost)
}

func hostDisconnectCommand() *cobra.Command {
	var force bool
	c := hostSub("disconnect", "Put back the entries connect rewrote, leaving the rest of the host's file as it is", func(w io.Writer, hf hostFile, _ string, dry bool) error {
		return disconnectHost(w, hf, dry, force)
	})
	c.Long = `Put back, in the host's file, the entries connect rewrote in the scope (the
file's top-level servers, or with --project DIR that project's), with their
bytes from FILE.mcpx-fw.bak, and leave every other byte of the file as it is
now: what the host wrote since connect (Claude Code's state in
~/.claude.json) and another scope's connected entries stay. A file as
connect left it gets its bytes from before connect back.

An entry connect wrote that was changed or removed since stops disconnect
with one line naming the server and FILE:LINE, and nothing changes: edit
the entry by hand, or --force, which restores the whole backup (every
change since connect is lost, the host's and another scope's included). An
entry starting mcpx-fw serve that the backup has no entry for (one written
by hand) is named and left as it is.

The backup stays while a scope of the file still has entries for it to give
back, and is removed with the last of them. A connect of more of the file
(another scope, a server added) brings it up to date first: the file as it
is then, with the entries connect wrote put back, so it holds each entry as
it was when connect replaced it. With nothing connected, disconnect says so
and changes nothing. --dry-run prints the diff.`
	c.Flags().BoolVar(&force, "force", false, "restore the whole backup FILE.mcpx-fw.bak (the file from before connect), even when an entry changed since: every change since connect, the host's and the other scope's included, is lost")
	return c
}

// hostSub is one host subcommand: HOST, --host-config and --dry-run.
func hostSub(verb, short string, run func(io.Writer, hostFile, string, bool) error) *cobra.Command {
	c := &cobra.Command{
		Use:   verb + " HOST",
		Short: short,
		Args:  args(1, "mcpx-fw host "+verb+" HOST  (HOST: "+strings.Join(hostconfig.Names(), ", ")+")"),
		RunE: func(c *cobra.Command, a []string) error {
			hf, err := openHostFile(c, a[0])
			if err != nil {
				return err
			}
			dry, _ := c.Flags().GetBool("dry-run")
			return run(c.OutOrStdout(), hf, hostConfigPath(c), dry)
		},
	}
	c.Flags().String("host-config", "", "the host's config `FILE` (default: the host's usual file, see 'mcpx-fw host --help')")
	c.Flags().String("project", "", "claude-code only: the servers of the project in `DIR` (local scope), in ~/.claude.json unless --host-config")
	c.Flags().Bool("dry-run", false, "print what would change, as a diff, and change nothing")
	return c
}

// hostFile is a host's format and the file of it a command works on.
type hostFile struct {
	host hostconfig.Host
	path string
}

func openHostFile(c *cobra.Command, name string) (hostFile, error) {
	h, err := hostconfig.Lookup(name)
	if err != nil {
		return hostFile{}, usageError{err}
	}
	if dir, _ := c.Flags().GetString("project"); dir != "" {
		if h, err = projectScope(h, dir); err != nil {
			return hostFile{}, usageError{err}
		}
	}
	path, _ := c.Flags().GetString("host-config")
	if path == "" {
		if path, err = h.DefaultPath(); err != nil {
			return hostFile{}, err
		}
	}
	return hostFile{host: h, path: path}, nil
}

// projectScope is Claude Code's local scope of the project in dir, keyed
// by its absolute path as Claude Code keys it.
func projectScope(h hostconfig.Host, dir string) (hostconfig.Host, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return hostconfig.Host{}, err
	}
	return h.Project(abs)
}

// hostConfigPath is mcpx-fw's config the host commands write: the one
// every other command reads.
func hostConfigPath(c *cobra.Command) string {
	if p := configFlag(c); p != "" {
		return p
	}
	return "mcpx-fw.yaml"
}

// read returns the host's file and its servers.
func (hf hostFile) read() ([]byte, []hostconfig.Server, error) {
	data, err := os.ReadFile(hf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: no such file (name the host's file with --host-config)", hf.path)
	}
	if err != nil {
		return nil, nil, err
	}
	servers, err := hf.host.Parse(data)
	if err != nil {
		return nil, nil, hf.fail(err)
	}
	if len(servers) == 0 {
		return nil, nil, fmt.Errorf("%s: no servers under %s: nothing to wire (is it %s's file%s?)", hf.path, hf.under(), hf.host.Name, hf.scopeHint())
	}
	return data, servers, nil
}

// fail names the host's file in an error of it, as FILE:LINE when the
// error is at a line.
func (hf hostFile) fail(err error) error {
	var syn *hostconfig.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%s:%d: %s", hf.path, syn.Line, syn.Msg)
	}
	return fmt.Errorf("%s: %w", hf.path, err)
}

// place is the file, and the servers' object in it when that is not the
// host's top-level one.
func (hf hostFile) place() string {
	if hf.host.Where() == hf.host.Key {
		return hf.path
	}
	return hf.path + " " + hf.host.Where()
}

// under names the servers' object: "servers", or
// projects["/abs/dir"].mcpServers.
func (hf hostFile) under() string {
	if hf.host.Where() == hf.host.Key {
		return strconv.Quote(hf.host.Key)
	}
	return hf.host.Where()
}

func (hf hostFile) scopeHint() string {
	if hf.host.Where() == hf.host.Key {
		return ""
	}
	return ", and the folder Claude Code was started in"
}

func connectHost(w io.Writer, hf hostFile, cfg string, dry bool) error {
	data, servers, err := hf.read()
	if err != nil {
		return err
	}
	if _, err := importHost(w, hf, cfg, dry); err != nil {
		return err
	}
	serve, err := serveEntry(cfg)
	if err != nil {
		return err
	}
	connected, err := hf.host.Connect(data, serve)
	if err != nil {
		return hf.fail(err)
	}
	if dry {
		fmt.Fprint(w, hf.host.MaskedDiff(hf.path, data, connected))
		return nil
	}
	if bytes.Equal(data, connected) {
		fmt.Fprintf(w, "%s (%s) is already connected: every server starts through mcpx-fw serve\n", hf.host.Name, hf.place())
		return nil
	}
	if err := hf.rebackup(data); err != nil {
		return err
	}
	if err := hostconfig.Write(hf.path, data, connected); err != nil {
		return err
	}
	fmt.Fprintf(w, "connected %s (%s): %s start through mcpx-fw serve; the file as it was is in %s (mode 0600); restart %s\n",
		hf.host.Name, hf.place(), serverNames(servers), hostconfig.BackupPath(hf.path), hf.host.Name)
	if hf.backupHoldsSecret() {
		warnUnignored(w, hostconfig.BackupPath(hf.path))
	}
	return nil
}

// rebackup brings a backup already there up to date before a connect
// of more of the file: the file as it is, with the entries connect wrote
// put back from the backup, so the backup holds the entries this connect
// replaces as they are now. A backup that cannot be brought up to date
// (an entry connect wrote was changed since) stays as it is.
func (hf hostFile) rebackup(data []byte) error {
	old, err := os.ReadFile(hostconfig.BackupPath(hf.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	without, err := hf.host.Unconnected(old, data)
	if err != nil || bytes.Equal(without, old) {
		return nil
	}
	return hostconfig.Rebackup(hf.path, without)
}

// disconnectHost puts back the entries connect wrote in the scope, with
// their bytes from the backup, and leaves the rest of the file as it is
// now: the host's own writes since connect (Claude Code's state in
// ~/.claude.json) and another scope's entries stay. An entry changed or
// removed since connect stops it; force restores the whole backup.
func disconnectHost(w io.Writer, hf hostFile, dry, force bool) error {
	if force {
		return restoreAll(w, hf, dry)
	}
	current, backup, err := hf.disconnecting()
	if err != nil || backup == nil {
		return hf.nothing(w, err, " (no backup "+hostconfig.BackupPath(hf.path)+")")
	}
	d, err := hf.host.Disconnect(backup, current)
	switch {
	case err != nil:
		return hf.changed(err)
	case dry:
		fmt.Fprint(w, hf.host.MaskedDiff(hf.path, current, d.Data))
		return nil
	case len(d.Restored) == 0:
		return hf.nothing(w, nil, unknownNote(d.Unknown))
	}
	keep := hf.host.BackupNeeded(backup, d.Data)
	if err := hostconfig.Put(hf.path, d.Data, keep); err != nil {
		return err
	}
	fmt.Fprintf(w, "disconnected %s (%s): %s start as before connect; %s%s; restart %s\n",
		hf.host.Name, hf.place(), strings.Join(d.Restored, ", "), backupNote(hf.path, keep), unknownNote(d.Unknown), hf.host.Name)
	return nil
}

// nothing says, when err is nil, that the scope has nothing connected to
// disconnect.
func (hf hostFile) nothing(w io.Writer, err error, note string) error {
	if err == nil {
		fmt.Fprintf(w, "%s (%s): nothing connected by mcpx-fw to disconnect%s\n", hf.host.Name, hf.place(), note)
	}
	return err
}

// disconnecting reads the host's file and its backup; with no backup, a
// nil one when the scope starts no server through mcpx-fw.
func (hf hostFile) disconnecting() (current, backup []byte, err error) {
	backup, berr := hostconfig.Restored(hf.path)
	current, err = os.ReadFile(hf.path)
	switch {
	case berr != nil && err != nil:
		return nil, nil, berr // neither file: the backup's error says more
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%s: no such file; %s holds it as it was before connect (--force puts it back)", hf.path, hostconfig.BackupPath(hf.path))
	case err != nil:
		return nil, nil, err
	case berr != nil:
		if _, err := os.Stat(hostconfig.BackupPath(hf.path)); !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, berr
		}
		return current, nil, hf.unbacked(current)
	}
	return current, backup, nil
}

// unbacked is a scope with no backup: one that starts a server through
// mcpx-fw has lost that entry's bytes from before connect.
func (hf hostFile) unbacked(current []byte) error {
	servers, err := hf.host.Parse(current)
	if err != nil {
		return hf.fail(err)
	}
	for _, s := range servers {
		if s.Connected {
			return fmt.Errorf("%s: %s starts mcpx-fw serve, and there is no backup %s holding its entry from before connect: edit it by hand",
				hf.path, s.Name, hostconfig.BackupPath(hf.path))
		}
	}
	return nil
}

// restoreAll is --force: the whole backup back, whatever changed since.
func restoreAll(w io.Writer, hf hostFile, dry bool) error {
	backup, err := hostconfig.Restored(hf.path)
	if err != nil {
		return err
	}
	if dry {
		current, err := os.ReadFile(hf.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		fmt.Fprint(w, hf.host.MaskedDiff(hf.path, current, backup))
		return nil
	}
	if err := hostconfig.Restore(hf.path); err != nil {
		return err
	}
	fmt.Fprintf(w, "disconnected %s (%s): the whole file is as it was before connect; restart %s\n", hf.host.Name, hf.path, hf.host.Name)
	return nil
}

// changed is an entry changed since connect, at FILE:LINE, with what to
// do about it.
func (hf hostFile) changed(err error) error {
	var ch *hostconfig.ChangedError
	if !errors.As(err, &ch) {
		return hf.fail(err)
	}
	at := hf.path
	if ch.Line > 0 {
		at += ":" + strconv.Itoa(ch.Line)
	}
	return fmt.Errorf("%s: %v, and putting its entry from before connect back would undo that: edit it by hand, or --force to restore the whole file from %s (every change since connect is lost)",
		at, ch, hostconfig.BackupPath(hf.path))
}

func backupNote(path string, keep bool) string {
	if keep {
		return hostconfig.BackupPath(path) + " is kept for the entries still connected"
	}
	return hostconfig.BackupPath(path) + " is removed"
}

// unknownNote names the servers starting mcpx-fw serve that the backup
// does not hold: disconnect leaves them.
func unknownNote(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; " + strings.Join(names, ", ") + " start mcpx-fw serve but were not in the file at connect: edit them by hand"
}

// serveEntry is this binary and the config's absolute path: what the
// host's rewritten entries start, whatever its working folder.
func serveEntry(cfg string) (hostconfig.Serve, error) {
	exe, err := os.Executable()
	if err != nil {
		return hostconfig.Serve{}, fmt.Errorf("the path of mcpx-fw itself: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	abs, err := filepath.Abs(cfg)
	if err != nil {
		return hostconfig.Serve{}, err
	}
	return hostconfig.Serve{Binary: exe, Config: abs}, nil
}

func serverNames(servers []hostconfig.Server) string {
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return "no servers"
	}
	return strings.Join(names, ", ")
}
