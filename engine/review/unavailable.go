package review

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"
)

// ErrUnavailable is returned (wrapped; test with errors.Is) when the
// store's database server cannot be reached or dropped the connection: the
// connection was refused or timed out, the server is shutting down or
// restarting (SQLSTATE 57P01-57P03), or the socket failed. Nothing was
// written, unless the error also wraps ErrOutcomeUnknown. The Store
// reconnects by itself: the next call tries again.
var ErrUnavailable = errors.New("review store unavailable")

// ErrOutcomeUnknown is returned (wrapped, with ErrUnavailable) when the
// connection was lost while the server committed a write (its COMMIT, or
// the end of a write that is one statement): it may or may not have taken
// effect. The write is not retried, since running it twice
// could decide or deliver twice; the caller fails closed, and the item's
// state (review show) says what happened.
var ErrOutcomeUnknown = errors.New("outcome unknown: the connection was lost during COMMIT")

// unavailable wraps err with ErrUnavailable, and logs it naming the backend
// and what failed, when err says the PostgreSQL server is out of reach;
// any other error passes unchanged. The store's name never carries its
// password (OpenURL redacts it).
func (s *storage) unavailable(op string, err error) error {
	if err == nil || s.db.dialect != dialectPostgres || errors.Is(err, ErrUnavailable) || !unreachable(err) {
		return err
	}
	s.log.Warn("review store unavailable", zap.String("backend", s.Backend()),
		zap.String("store", s.path), zap.String("failed", op), zap.Error(err))
	return fmt.Errorf("review store %s (%s) unavailable: %s failed: %w: %w", s.path, s.Backend(), op, ErrUnavailable, err)
}

// unreachable reports an error that says the server cannot be reached now:
// a lost connection (connectionLost) or a connection that could not be
// made for a reason of the network or the server's state, not of the
// credentials or the database named.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return connectionLost(err) || pe.Code == "53300" // too many connections
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce):
		return true // a connect_timeout ends as a context error inside it
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return false // the caller's deadline (waiting for the write lock), not the server's state
	}
	return connectionLost(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrDeadlineExceeded)
}

// connectProblem names, in words an operator can act on, why a connection
// to the PostgreSQL server failed: what `mcpx-fw check` and serve's start
// print before the driver's own message. "" when it cannot tell.
func connectProblem(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return "authentication failed: check the user and password in store.url (or MCPXFW_STORE_URL) and the server's pg_hba.conf"
		case "3D000":
			return "the database named in store.url does not exist"
		case "57P03":
			return "the server is starting up or shutting down"
		case "53300":
			return "the server has no connection slot left (max_connections)"
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens at that host and port (is PostgreSQL running there?)"
	case errors.Is(err, syscall.ENOENT):
		return "no server socket in that directory (is PostgreSQL running, and is host its socket directory?)"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out connecting (connect_timeout in store.url sets the limit)"
	case unreachable(err):
		return "the server cannot be reached"
	}
	return ""
}
