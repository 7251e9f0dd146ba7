// Package turn gives each key one turn at a time among the goroutines of
// one process: the review store's charges to one server take their turn
// here, holding nothing while they wait. It knows nothing of the store,
// and imports no mcpx-fw package.
package turn

import (
	"context"
	"sync"
)

// Turns gives each key (a server) one turn at a time. A waiter waits
// here, in the process, holding nothing: the review store takes a pooled
// connection only once a charge's turn comes, to take the server's
// advisory lock against other replicas on PostgreSQL. A key's entry lives
// only while someone holds or awaits its turn. The zero Turns is ready.
type Turns struct {
	mu    sync.Mutex
	locks map[string]*keyTurn
}

// keyTurn is one key's turn: a token in turn means it is taken.
type keyTurn struct {
	turn  chan struct{}
	users int // holders and waiters
}

// Take waits for key's turn, or for ctx to end, and returns what ends
// the turn.
func (l *Turns) Take(ctx context.Context, key string) (release func(), err error) {
	sl := l.join(key)
	select {
	case sl.turn <- struct{}{}:
		return func() {
			<-sl.turn
			l.leave(key, sl)
		}, nil
	case <-ctx.Done():
		l.leave(key, sl)
		return nil, ctx.Err()
	}
}

func (l *Turns) join(key string) *keyTurn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = make(map[string]*keyTurn)
	}
	sl := l.locks[key]
	if sl == nil {
		sl = &keyTurn{turn: make(chan struct{}, 1)}
		l.locks[key] = sl
	}
	sl.users++
	return sl
}

func (l *Turns) leave(key string, sl *keyTurn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sl.users--; sl.users == 0 {
		delete(l.locks, key)
	}
}
