package pgtest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestRestartKeepsData: a database created before a restart is still
// there after it (creating it again fails), and one can be created after.
func TestRestartKeepsData(t *testing.T) {
	c := New(t)
	if err := c.CreateDatabase("before"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase("before"); err == nil {
		t.Error("database before is gone after the restart: created it again")
	}
	if err := c.CreateDatabase("after"); err != nil {
		t.Errorf("create a database after the restart: %v", err)
	}
}

// TestURL names the database, the superuser and the socket dir.
func TestURL(t *testing.T) {
	c := &Cluster{dir: "/tmp/pg x"}
	u, err := url.Parse(c.URL("queue"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "postgres" || u.User.Username() != Superuser || u.Path != "/queue" ||
		u.Query().Get("host") != "/tmp/pg x" || u.Query().Get("sslmode") != "disable" {
		t.Errorf("URL = %s", u)
	}
}

// TestCPU counts the server's work: creating a database costs it some.
func TestCPU(t *testing.T) {
	c := New(t)
	before, err := c.CPU()
	if err != nil {
		t.Skip(err)
	}
	for i := range 5 {
		if err := c.CreateDatabase(fmt.Sprintf("d%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.CPU()
	if err != nil || after <= before {
		t.Errorf("CPU before %v, after five databases %v (%v); want more", before, after, err)
	}
}

// TestDataDir: a configuration written into the data dir holds after a
// restart: a pg_hba.conf that lets nobody in makes CreateDatabase fail.
func TestDataDir(t *testing.T) {
	c := New(t)
	if err := os.WriteFile(filepath.Join(c.DataDir(), "pg_hba.conf"), []byte("local all all reject\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase("refused"); err == nil {
		t.Error("CreateDatabase succeeded with pg_hba.conf rejecting every connection")
	}
}
