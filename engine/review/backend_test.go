package review

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// The store suite runs against both backends. `go test` runs it on SQLite,
// then runs this test binary again, with the same flags, and
// MCPXFW_TEST_STORE=postgres, against a throwaway PostgreSQL cluster the
// second run starts for itself (package pgtest). Set the variable
// yourself to run only one pass. Without PostgreSQL's binaries the second
// pass is skipped with a message, unless CI is set: there, their absence
// fails the run.
const backendEnv = "MCPXFW_TEST_STORE"

// testPostgres is the cluster of the PostgreSQL pass, nil in the SQLite
// pass.
var testPostgres *pgtest.Cluster

func TestMain(m *testing.M) {
	os.Exit(runBackends(m))
}

func runBackends(m *testing.M) int {
	switch os.Getenv(backendEnv) {
	case "", "sqlite":
		code := m.Run()
		if os.Getenv(backendEnv) == "sqlite" || code != 0 {
			return code
		}
		return rerunOnPostgres()
	case "postgres":
		c, err := pgtest.Start()
		if err != nil {
			fmt.Fprintf(os.Stderr, "store suite on PostgreSQL: %v\n", err)
			return 1
		}
		testPostgres = c
		code := m.Run()
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "store suite on PostgreSQL: stop the cluster: %v\n", err)
		}
		return code
	}
	fmt.Fprintf(os.Stderr, "%s=%q: want sqlite or postgres\n", backendEnv, os.Getenv(backendEnv))
	return 2
}

// rerunOnPostgres runs this test binary again for the PostgreSQL pass.
func rerunOnPostgres() int {
	if _, err := pgtest.BinDir(); err != nil {
		if pgtest.InCI() {
			fmt.Fprintf(os.Stderr, "store suite on PostgreSQL: %v (CI is set, so this fails)\n", err)
			return 1
		}
		fmt.Printf("store suite on PostgreSQL SKIPPED: %v; install PostgreSQL (Debian: apt-get install postgresql) to run it\n", err)
		return 0
	}
	fmt.Println("=== store suite on PostgreSQL (" + backendEnv + "=postgres)")
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), backendEnv+"=postgres")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "store suite on PostgreSQL: %v\n", err)
		return 1
	}
	return 0
}

// onPostgres reports whether this is the PostgreSQL pass.
func onPostgres() bool { return testPostgres != nil }

// sqliteOnly skips a test of something only the SQLite backend has (its
// file, its pragmas, process ids as owners) in the PostgreSQL pass.
func sqliteOnly(t testing.TB, why string) {
	t.Helper()
	if onPostgres() {
		t.Skip("SQLite only: " + why)
	}
}

// openBackend opens the store the test's backend keeps for dir: the SQLite
// file in dir, or on PostgreSQL a schema of the cluster's database named
// after dir, so every Store a test opens on one dir shares one queue, as
// processes sharing a state dir (or one database) do.
func openBackend(dir string, log *zap.Logger) (*Store, error) {
	if !onPostgres() {
		return Open(dir, log)
	}
	u, err := schemaURL(testPostgres, dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return OpenURL(ctx, u, log)
}

// schemaURL creates (once) the schema for dir in c's postgres database and
// returns a URL whose connections use it.
func schemaURL(c *pgtest.Cluster, dir string) (string, error) {
	sum := sha256.Sum256([]byte(dir))
	schema := "t_" + hex.EncodeToString(sum[:10])
	base := c.URL("postgres")
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA IF NOT EXISTS " + schema); err != nil {
		return "", fmt.Errorf("create schema %s: %w", schema, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
