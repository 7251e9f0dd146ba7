// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb in
// a temporary dir, the server listening only on a unix socket in that dir,
// without fsync (nothing in it outlives the test binary, and a restart
// keeps every commit). It is ordinary
// code so the store suite (engine/review) and the replica tests of the
// command (cmd/mcpx-fw) share one implementation; only tests import it,
// and it imports only the standard library.
//
// As root (CI containers) it runs PostgreSQL as the postgres user (Debian's
// package makes one) or else nobody, since initdb and the server refuse
// root.
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Superuser is the role initdb makes and every URL of a Cluster connects as.
const Superuser = "postgres"

// Cluster is one running throwaway cluster.
type Cluster struct {
	dir string // holds data/, the socket and the server's log
	bin string // initdb, pg_ctl and createdb
	run runAs
}

// runAs runs PostgreSQL's commands: as this user, or, when the tests run
// as root, as an unprivileged one (runner_unix.go).
type runAs func(cmd *exec.Cmd) error

// BinDir finds initdb and pg_ctl: on PATH, else in Debian's
// /usr/lib/postgresql/<version>/bin (the newest version). Its error says
// why no cluster can start on this machine.
func BinDir() (string, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		if a, b := resolved(initdb), resolved(pgctl); filepath.Dir(a) == filepath.Dir(b) {
			return filepath.Dir(a), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL's initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/*/bin")
}

func resolved(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}

// version reads the major version from /usr/lib/postgresql/<v>/bin.
func version(binDir string) int {
	var v int
	fmt.Sscanf(filepath.Base(filepath.Dir(binDir)), "%d", &v)
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}

// InCI reports whether the CI variable is set: there a machine without
// PostgreSQL fails the tests that need it instead of skipping them.
func InCI() bool { return os.Getenv("CI") != "" }

// Start makes and starts a cluster in a new temporary dir.
func Start() (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(clusterParent(), "mcpxfw-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	if c.run, err = runner(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.cmd("initdb", "-D", c.data(), "-U", Superuser, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.StartServer(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// New starts a cluster for one test and stops it when the test ends. It
// skips the test where PostgreSQL is not installed, unless InCI: there it
// fails it.
func New(tb testing.TB) *Cluster {
	tb.Helper()
	if _, err := BinDir(); err != nil {
		Skip(tb, err)
	}
	c, err := Start()
	if err != nil {
		tb.Fatalf("start PostgreSQL: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return c
}

// Skip skips tb because PostgreSQL is unavailable (err says why), or fails
// it if InCI.
func Skip(tb testing.TB, err error) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("PostgreSQL: %v (CI is set, so this fails)", err)
	}
	tb.Skipf("PostgreSQL: %v; install PostgreSQL (Debian: apt-get install postgresql) to run this", err)
}

// URL is the postgres:// URL of database db as the cluster's superuser,
// over the unix socket.
func (c *Cluster) URL(db string) string {
	return (&url.URL{Scheme: "postgres", User: url.User(Superuser), Path: "/" + db,
		RawQuery: url.Values{"host": {c.dir}, "sslmode": {"disable"}}.Encode()}).String()
}

// CreateDatabase creates database name (an identifier: letters, digits
// and underscores).
func (c *Cluster) CreateDatabase(name string) error {
	return c.client("createdb", "-h", c.dir, "-U", Superuser, name)
}

// StopServer stops the server at once (immediate mode: clients see their
// connections cut, as in a crash), keeping the data dir, so StartServer
// brings the same databases back.
func (c *Cluster) StopServer() error {
	return c.cmd("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
}

// StartServer starts the server on the cluster's data dir and waits until
// it accepts connections.
func (c *Cluster) StartServer() error {
	// fsync off: the machine does not crash under a test, only the server
	// does (StopServer is immediate). Commits stay synchronous, so a
	// commit the server acknowledged is in the WAL the restart replays.
	opts := "-c fsync=off -c full_page_writes=off -c listen_addresses='' -c max_connections=200 -k " + c.dir
	if err := c.cmd("pg_ctl", "-D", c.data(), "-l", c.logPath(), "-o", opts, "-w", "start"); err != nil {
		log, _ := os.ReadFile(c.logPath())
		return fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return nil
}

// Restart stops the server at once and starts it again on the same data:
// every connection is cut, everything committed stays.
func (c *Cluster) Restart() error {
	if err := c.StopServer(); err != nil {
		return err
	}
	return c.StartServer()
}

// Stop stops the server at once and removes the cluster.
func (c *Cluster) Stop() error {
	err := c.StopServer()
	return errors.Join(err, os.RemoveAll(c.dir))
}

// DataDir is the cluster's data directory, for a test that changes the
// server's configuration (pg_hba.conf, postgresql.conf) and then
// restarts it.
func (c *Cluster) DataDir() string { return c.data() }

// Log returns the server's log so far, for a failing test to show.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(c.logPath())
	return string(b)
}

func (c *Cluster) data() string    { return filepath.Join(c.dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.dir, "server.log") }

// cmd runs one of the server's commands as the cluster's owner.
func (c *Cluster) cmd(name string, args ...string) error {
	return c.exec(c.run, name, args...)
}

// client runs a client command (it needs no particular user: the socket
// and trust authentication let this process's user in).
func (c *Cluster) client(name string, args ...string) error {
	return c.exec(func(cmd *exec.Cmd) error { return cmd.Run() }, name, args...)
}

func (c *Cluster) exec(run runAs, name string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := run(cmd); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out.Bytes())
	}
	return nil
}
