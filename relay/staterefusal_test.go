package relay

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// TestSealRejection: each reason seal refuses a state for reaches the host
// as one fixed phrase, and none of the error's detail does.
func TestSealRejection(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{seal.ErrMalformed, "requestState rejected: malformed"},
		{seal.ErrTampered, "requestState rejected: tampered"},
		{seal.ErrExpired, "requestState rejected: expired"},
		{seal.ErrWrongServer, "requestState rejected: issued for another server"},
		{seal.ErrWrongCall, "requestState rejected: issued for another call"},
		{seal.ErrReplayed, "requestState rejected: already used"},
		{errors.New("something else"), "requestState rejected: invalid"},
	}
	for _, tt := range tests {
		wrapped := errors.Join(errors.New("detail "+"UPSTREAM-SECRET-7f3a"), tt.err)
		got := stateRejection(wrapped)
		if got == nil || got.Code != jsonrpc.CodeInvalidParams || got.Message != tt.want || string(got.Data) != `{"reason_codes":["state-rejected"]}` {
			t.Errorf("rejection(%v) = %+v, want code %d %q", tt.err, got, jsonrpc.CodeInvalidParams, tt.want)
		}
	}
	if got := stateRejection(nil); got != nil {
		t.Errorf("rejection(nil) = %+v, want nil", got)
	}
}
