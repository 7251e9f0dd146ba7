package review

import (
	"context"
	"hash/fnv"
	"strings"
)

// Presence: whether the replica holding a bridged call still runs, asked
// by another replica before it hands the call's retry over and while it
// waits. A lease (lease.go) tells it, but only once it has run out, up to
// store.lease after a crash. On PostgreSQL the listener's connection
// (listen.go) also holds a session-level advisory lock named after the
// lease: a process that dies, killed or crashed, loses its connections
// at once, and the lock with them. A replica whose listener lost its
// connection counts as gone for that while: a retry handed to it then is
// refused, which the host may retry.

// presenceClass is the first key of every presence lock: the letters
// "mcpx" as a number, so presence locks never collide with the store's
// other advisory locks (writeLockKey, a server's turn).
const presenceClass = 0x6d637078

// presenceKey is the second key of owner's presence lock: a hash of the
// lease id, non-negative so it reads back the same from pg_locks. Two
// leases sharing one only make a gone holder look present, which its
// lease then tells.
func presenceKey(owner string) int64 {
	h := fnv.New32a()
	h.Write([]byte(owner))
	return int64(h.Sum32() & 0x7fffffff)
}

// Owner is the token this Store owns its items by (a lease id on
// PostgreSQL, a process token on SQLite): what HolderAlive asks about.
func (s *Store) Owner() string { return s.owner }

// Present makes this Store findable as alive by HolderAlive: on
// PostgreSQL it starts the listener, whose connection holds the presence
// lock, and returns once it listens (or its first attempt failed, or ctx
// ended). On SQLite, where a process is its own presence, it does nothing.
func (s *Store) Present(ctx context.Context) {
	s.startListening(ctx)
}

// HolderAlive reports whether the Store that owns holder still runs: on
// PostgreSQL its lease holds and its presence lock is held; on SQLite its
// process runs. A read that fails is an error: the caller cannot tell.
func (s *Store) HolderAlive(ctx context.Context, holder string) (bool, error) {
	if s.db.dialect != dialectPostgres {
		return s.alive(ctx, s.db, holder), nil
	}
	if !strings.HasPrefix(holder, leasePrefix) {
		return false, nil
	}
	var alive bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM leases WHERE id = ? AND expires_at > clock_timestamp())
		AND EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = ?
			AND objid::bigint = ? AND objsubid = 2 AND granted)`,
		holder, int64(presenceClass), presenceKey(holder)).Scan(&alive)
	return alive, err
}

// HandoverWake returns a channel closed when a handover event for key is
// announced ("ask:" and a holder's name, "answer:" or "gone:" and a nonce),
// and the func that stops waiting for it. Only PostgreSQL announces them;
// on SQLite the channel is never closed and the caller polls. The caller
// reads the table after taking the channel, so an event during the read
// is not missed.
func (s *Store) HandoverWake(key string) (<-chan struct{}, func()) {
	s.startListening(context.Background())
	id := handoverWakeKey(key)
	slot := s.subscribe(id)
	return slot.ch, func() { s.unsubscribe(id, slot) }
}

// handoverWakeKey is key among the waiters, apart from every item id.
func handoverWakeKey(key string) string { return "\x00handover:" + key }
