package review

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the name of the queue's database inside the state dir.
const FileName = "reviews.db"

// DefaultPollInterval is how often a waiter re-reads its item to see a
// decision written by another process (the operator's CLI).
const DefaultPollInterval = 250 * time.Millisecond

// maxConns bounds the connections a Store opens, and keeps them all for
// reuse. Unbounded (database/sql keeps only 2 idle), a burst of waiters and
// decisions opened a connection each and closed it again; and a connection
// closed while another holds a lock on the file leaves its descriptor open
// (SQLite's unix VFS defers the close, which would drop the process's
// POSIX locks), so serve kept as many descriptors as its busiest moment
// needed (cmd/mcpx-fw TestLoad). Writes are serialised anyway (wmu) and WAL
// lets a few readers run beside the writer; SQLite's work is CPU-bound, so
// more connections than cores buy nothing.
func maxConns() int { return max(4, runtime.GOMAXPROCS(0)) }

// busyTimeout bounds how long a statement waits for another process's
// write lock before failing with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Store is the review queue in one state dir. It is safe for concurrent use
// by many goroutines, and several Stores (in one process or many) may share
// the same dir.
type Store struct {
	// PollInterval is how often Wait re-reads an item for decisions made by
	// other processes. Default DefaultPollInterval; set it before the first
	// Wait.
	PollInterval time.Duration

	// PolicyRevision names the policy in force, for the audit entries this
	// Store writes (auditChain). Default: none ("" in the entries); set it
	// before the first write.
	PolicyRevision func() string

	// Opened hears of every review this Store opens, once it is
	// committed, on the goroutine that opened it: it must return at once
	// (hand the work to a queue of its own) or it delays the decision.
	// Every way into the queue ends in the same step (opened), so no
	// caller can open a review unheard. Only the process whose Store
	// opened a review hears of it, so with replicas sharing a store each
	// review is heard of once. nil: nobody hears. Set it before the first
	// write.
	Opened func(Opened)

	// KeepInputs is how long the policy inputs kept for replay
	// (KeptInput) stay: Prune deletes older ones, and every one when it is
	// 0. Set it before the first Prune.
	KeepInputs time.Duration
	// KeepInputsBytes bounds what the kept inputs take in the store: their
	// documents' bytes, and keptRowOverhead a row. Past it the oldest
	// inputs of the servers whose inputs take the most are deleted
	// (trimInputs), whatever their age, by WriteInputs once a trimShare of
	// it was written since its last trim, and by Prune. An upstream
	// writes these documents, so this is what its traffic may take of the
	// store however fast it sends, its own older inputs going first, and
	// another server's only past an equal share. 0 bounds nothing. Set it
	// before the first write.
	KeepInputsBytes int64
	// inputStmts are WriteInputs' statements, one a row count, prepared
	// on first use (inputs.go).
	inputStmts prepared
	// untrimmed is what WriteInputs wrote since its last trim, in the
	// bytes KeepInputsBytes counts.
	untrimmed atomic.Int64

	// The parts (see the package doc) are embedded, so their exported
	// methods are the Store's; a part's own methods reach only its fields
	// and the parts it was given in newStore.
	//
	// storage is the database and its writes, which every part shares.
	storage
	// auditChain is the audit log every transition appends to.
	auditChain
	// continuations are the requests a retry may resume.
	continuations
	// handovers are the retries of bridged calls handed between replicas.
	handovers
	// retention erases what is kept no longer.
	retention
	// ledger records decisions and their charges.
	ledger

	// owner names this process in the items it opens; alive reports whether
	// an owner's process (or lease) still runs, reading what it must
	// through q: inside a write, the transaction's own connection (see
	// settle). Both are fields so tests can simulate processes that die.
	owner string
	alive func(ctx context.Context, q rowReader, owner string) bool

	// wakeups wake this Store's waiters and whoever waits on Changed.
	wakeups
	// blocked, when set (by tests, before the first Wait), is called each
	// time a Wait has read its item pending and blocks.
	blocked func(id string)

	// dues are the deadlines, on the monotonic clock, of the items this
	// Store opened.
	dues dues

	// replica is what a Store on PostgreSQL shares with other replicas;
	// leases is its lease there.
	replica
	leases
	// listener wakes this Store's waiters on other replicas' changes.
	listener
}

// Open opens (creating if needed) the review queue in dir. The dir is made
// 0700 and the file 0600; an existing dir or file that group or others can
// reach is refused rather than silently used, because the queue holds
// prompts and the power to approve them.
func Open(dir string, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	path, err := prepareFiles(dir)
	if err != nil {
		return nil, err
	}
	sqlDB, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open review store %s: %w", path, err)
	}
	sqlDB.SetMaxOpenConns(maxConns())
	sqlDB.SetMaxIdleConns(maxConns())
	s := newStore(&db{DB: sqlDB, binder: newBinder(dialectSQLite)}, path, log.Named("review"))
	if err := s.migrateWhenFree(); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open review store %s: %w", path, err)
	}
	return s, nil
}

// openRetry is how often Open tries again while another process holds a
// new store's write lock.
const openRetry = 20 * time.Millisecond

// migrateWhenFree brings the schema up to date, waiting up to busyTimeout
// for another process that is making the same new store: serve and
// `mcpx-fw review list` started together, or a host that starts serve
// twice at once to probe it. The first connection turns a new database to
// WAL, which upgrades its read lock to a write lock, and SQLite refuses
// that at once (SQLITE_BUSY without waiting out busy_timeout, since
// waiting while holding a read lock could deadlock) when another
// connection holds the write lock. Once the database is in WAL mode the
// busy timeout covers every wait.
func (s *storage) migrateWhenFree() error {
	deadline := time.Now().Add(busyTimeout)
	for {
		err := s.migrate(context.Background())
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(openRetry)
	}
}

// isBusy reports an error that is SQLITE_BUSY, in any of its extended codes.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusy
}

// newStore makes a Store and gives each part what it may touch: pointers
// to the parts it shares, and the queue's steps it needs, as funcs.
func newStore(db *db, path string, log *zap.Logger) *Store {
	s := &Store{
		PollInterval: DefaultPollInterval,
		storage:      storage{db: db, path: path, log: log},
		owner:        selfToken(),
		alive:        aliveByPID,
		wakeups:      newWakeups(),
		dues:         dues{m: make(map[string]time.Time)},
	}
	s.auditChain = auditChain{storage: &s.storage, policy: &s.PolicyRevision}
	s.continuations.storage = &s.storage
	s.handovers.storage = &s.storage
	s.listener = listener{storage: &s.storage, replica: &s.replica, wakeups: &s.wakeups,
		listenReady: make(chan struct{})}
	s.retention = retention{storage: &s.storage, audit: &s.auditChain, conts: &s.continuations, hands: &s.handovers, closeDue: s.sweep,
		keepInputs: &s.KeepInputs, keepInputsBytes: &s.KeepInputsBytes}
	s.ledger = ledger{storage: &s.storage, opening: s.opening, openItem: s.openItem, opened: s.opened}
	s.leases = leases{storage: &s.storage, replica: &s.replica, abandon: s.AbandonOrphans}
	return s
}

// Close closes the database. Waits in progress fail with an error. On
// PostgreSQL it first stops the listener and the heartbeat and releases
// the lease, so other replicas abandon what this Store still owned at
// their next sweep (within a third of their lease) instead of after its
// lease runs out.
func (s *Store) Close() error {
	if s.bgStop != nil {
		s.closeOnce.Do(func() {
			s.bgStop()
			s.bg.Wait()
			s.releaseLease()
		})
	}
	s.closeInsert()
	s.inputStmts.close()
	return s.db.Close()
}

// Path returns the database file, for error messages and `mcpx-fw check`.
func (s *storage) Path() string { return s.path }

// dsn asks for WAL (readers never block the writer), a busy timeout (other
// processes hold the write lock briefly) and BEGIN IMMEDIATE for every
// transaction: each transaction here reads then writes, and a deferred one
// would fail with SQLITE_BUSY when it upgrades instead of waiting.
// secure_delete zeroes the space a changed or erased row leaves behind:
// every update of an item rewrites its prompt, and retention must not find
// old copies of it in free pages (prune.go). cache_size bounds each
// connection's page cache at 256 KiB instead of SQLite's 2 MiB: the cache
// lives outside the Go heap for as long as the connection, there are
// maxConns of them, and a decision touches a few dozen pages; pages it
// misses come back from the operating system's file cache.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "secure_delete(ON)")
	q.Add("_pragma", "cache_size(-256)")
	q.Add("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// prepareFiles makes dir (0700) and the database file (0600) before SQLite
// touches them, so the file is never created with the umask's looser mode.
// SQLite gives the -wal and -shm files the database file's mode.
func prepareFiles(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("review store dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("create review store dir: %w", err)
	}
	if err := checkPrivate(abs, "state dir"); err != nil {
		return "", err
	}
	path := filepath.Join(abs, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("create review store: %w", err)
	}
	f.Close()
	return path, checkPrivate(path, "review store")
}

// checkPrivate refuses a path that group or others may access. Windows
// has no such mode bits (Go reports 0666 for every writable file), so
// there the check is left to the ACLs of the user's profile folder.
func checkPrivate(path, what string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s is accessible by group or others (mode %#o); run: chmod go-rwx %s",
			what, path, perm, path)
	}
	return nil
}
