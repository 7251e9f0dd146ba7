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
	"sync"
	"time"

	"go.uber.org/zap"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the name of the queue's database inside the state dir.
const FileName = "reviews.db"

// DefaultPollInterval is how often a waiter re-reads its item to see a
// decision written by another process (the operator's CLI).
const DefaultPollInterval = 250 * time.Millisecond

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
	// Store writes (see audit.go). Default: none ("" in the entries); set it
	// before the first write.
	PolicyRevision func() string

	db   *sql.DB
	path string
	log  *zap.Logger

	// owner names this process in the items it opens; alive reports whether
	// an owner's process still runs. Both are fields so tests can simulate
	// processes that die.
	owner string
	alive func(owner string) bool

	// wmu serialises this Store's write transactions, so goroutines of one
	// process queue here instead of spinning in SQLite's busy handler.
	wmu sync.Mutex

	waitMu  sync.Mutex
	waiters map[string]*waitSlot
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
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open review store %s: %w", path, err)
	}
	s := newStore(db, path, log.Named("review"))
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open review store %s: %w", path, err)
	}
	return s, nil
}

func newStore(db *sql.DB, path string, log *zap.Logger) *Store {
	return &Store{
		PollInterval: DefaultPollInterval,
		db:           db,
		path:         path,
		log:          log,
		owner:        selfToken(),
		alive:        ownerAlive,
		waiters:      make(map[string]*waitSlot),
	}
}

// Close closes the database. Waits in progress fail with an error.
func (s *Store) Close() error {
	return s.db.Close()
}

// Path returns the database file, for error messages and `mcpx-fw check`.
func (s *Store) Path() string { return s.path }

// dsn asks for WAL (readers never block the writer), a busy timeout (other
// processes hold the write lock briefly) and BEGIN IMMEDIATE for every
// transaction: each transaction here reads then writes, and a deferred one
// would fail with SQLITE_BUSY when it upgrades instead of waiting.
// secure_delete zeroes the space a changed or erased row leaves behind:
// every update of an item rewrites its prompt, and retention must not find
// old copies of it in free pages (prune.go).
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "secure_delete(ON)")
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

// write runs fn in one IMMEDIATE transaction and commits it when fn
// returns nil. Outcomes that must still commit (an expiry applied before a
// refused approval) are reported through fn's closure, not its error.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	return tx.Commit()
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
