package review

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// pgCluster is a throwaway PostgreSQL cluster for the tests: initdb in a
// temporary dir, listening only on a unix socket in that dir, without
// fsync (nothing in it outlives the test binary).
type pgCluster struct {
	dir string // holds data/, the socket and the server's log
	bin string
	url string // the postgres database as the cluster's superuser
	run runAs
}

// runAs runs PostgreSQL's commands: as this user, or, when the tests run
// as root (CI containers), as an unprivileged one, since initdb and the
// server refuse root (pgcluster_unix_test.go).
type runAs func(cmd *exec.Cmd) error

// pgBinDir finds initdb and pg_ctl: on PATH, else in Debian's
// /usr/lib/postgresql/<version>/bin (the newest version).
func pgBinDir() (string, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		if a, b := resolved(initdb), resolved(pgctl); filepath.Dir(a) == filepath.Dir(b) {
			return filepath.Dir(a), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
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

// pgVersion reads the major version from /usr/lib/postgresql/<v>/bin.
func pgVersion(binDir string) int {
	var v int
	fmt.Sscanf(filepath.Base(filepath.Dir(binDir)), "%d", &v)
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}

// startPostgres makes and starts a cluster.
func startPostgres() (*pgCluster, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpxfw-pg-")
	if err != nil {
		return nil, err
	}
	c := &pgCluster{dir: dir, bin: bin}
	if c.run, err = pgRunner(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := c.cmd("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := "-c fsync=off -c full_page_writes=off -c synchronous_commit=off -c listen_addresses='' -c max_connections=200 -k " + dir
	if err := c.cmd("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts, "-w", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	c.url = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: url.Values{"host": {dir}, "sslmode": {"disable"}}.Encode()}).String()
	return c, nil
}

// stop stops the server at once and removes the cluster.
func (c *pgCluster) stop() error {
	err := c.cmd("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	return errors.Join(err, os.RemoveAll(c.dir))
}

func (c *pgCluster) cmd(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := c.run(cmd); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out.Bytes())
	}
	return nil
}
