package demopeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Answer answers one request the host receives, given its params as JSON,
// with the result as JSON.
type Answer func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

// Outcome is what the upstream's tools report: the host's answer to the
// request they pushed, or the JSON-RPC error it was refused with.
type Outcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error as the upstream saw it.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// outcomeOf is what a pushed request got back.
func outcomeOf(res any, err error) Outcome {
	if err == nil {
		raw, _ := json.Marshal(res)
		return Outcome{Result: raw}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return Outcome{Error: &Error{Code: we.Code, Message: we.Message, Data: we.Data}}
	}
	return Outcome{Error: &Error{Message: err.Error()}}
}
