package relay

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// stateRejections is the one short phrase the host sees for each reason
// seal refuses a state. The detail stays in the error (for the log),
// never on the wire.
var stateRejections = []struct {
	err    error
	phrase string
}{
	{seal.ErrMalformed, "malformed"},
	{seal.ErrTampered, "tampered"},
	{seal.ErrExpired, "expired"},
	{seal.ErrWrongServer, "issued for another server"},
	{seal.ErrWrongCall, "issued for another call"},
	{seal.ErrReplayed, "already used"},
}

// stateRejection is the JSON-RPC error for a state seal refused: invalid
// params, with one short phrase per reason and none of the error's
// detail. nil for a nil err.
func stateRejection(err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	phrase := "invalid"
	for _, r := range stateRejections {
		if errors.Is(err, r.err) {
			phrase = r.phrase
			break
		}
	}
	return refusal.StateRejected(phrase)
}
