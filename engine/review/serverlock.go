package review

import (
	"context"
	"sync"
)

// serverLocks gives each server one turn at a time among this Store's
// charges (see Charge). A waiter waits here, in the process, holding
// nothing: on PostgreSQL it takes a pooled connection only once its turn
// comes, to take the server's advisory lock against other replicas. A
// server's entry lives only while someone holds or awaits it.
type serverLocks struct {
	mu    sync.Mutex
	locks map[string]*serverLock
}

// serverLock is one server's turn: a token in turn means it is taken.
type serverLock struct {
	turn  chan struct{}
	users int // holders and waiters
}

// lock waits for server's turn, or for ctx to end, and returns what ends
// the turn.
func (l *serverLocks) lock(ctx context.Context, server string) (unlock func(), err error) {
	sl := l.join(server)
	select {
	case sl.turn <- struct{}{}:
		return func() {
			<-sl.turn
			l.leave(server, sl)
		}, nil
	case <-ctx.Done():
		l.leave(server, sl)
		return nil, ctx.Err()
	}
}

func (l *serverLocks) join(server string) *serverLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = make(map[string]*serverLock)
	}
	sl := l.locks[server]
	if sl == nil {
		sl = &serverLock{turn: make(chan struct{}, 1)}
		l.locks[server] = sl
	}
	sl.users++
	return sl
}

func (l *serverLocks) leave(server string, sl *serverLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sl.users--; sl.users == 0 {
		delete(l.locks, server)
	}
}
