package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// keptInput is what the store keeps of a decision for replay, when
// Config.KeepInputs is on: the input the policy saw and what it reached,
// taken before the store opens a review (a review the store cannot open
// turns the outcome into an error that is the store's, not the
// policy's). A decision made before the policy ran keeps no document, so
// replay can name it; an input that cannot be encoded keeps nothing.
func (e *Engine) keptInput(as *assessment, s Request) *review.KeptInput {
	if e.keeper == nil {
		return nil
	}
	v := &as.verdict
	in := &review.KeptInput{DecisionID: v.DecisionID, Server: s.Server.Name, Kind: string(s.kindOf()),
		Stage: string(v.Stage), Revision: as.revision, Outcome: v.Outcome.String(), Reasons: v.ReasonCodes(),
		AwaitAnswer: s.AwaitAnswer}
	if as.revision == "" {
		return in
	}
	doc, err := json.Marshal(as.input)
	if err != nil {
		e.log.Error("keep input for replay", zap.String("decision_id", v.DecisionID), zap.Error(err))
		return nil
	}
	in.Input = doc
	return in
}

// ErrNotKept is Redecide's answer for a decision whose input was not
// kept: it was made before the policy ran.
var ErrNotKept = errors.New("decided before the policy ran: no input to replay")

// Redecide decides a kept input again with p, through the engine's own
// evaluation and nothing else: the policy on the input document as it was
// (usage and approval at the time included), an approval that the policy
// still wants reviewed an error, and a pass held for an operator's answer
// when the request waited for one. It charges no usage, opens no review
// and writes no log or record.
func Redecide(ctx context.Context, p *Policy, in review.KeptInput) (Verdict, error) {
	if in.Input == nil {
		return Verdict{}, ErrNotKept
	}
	doc, err := decodeKept(in.Input)
	if err != nil {
		return Verdict{}, fmt.Errorf("decision %s: kept input: %w", in.DecisionID, err)
	}
	v := Verdict{DecisionID: in.DecisionID, Stage: Stage(in.Stage)}
	approved := doc["approval"] != nil
	d, err := p.Evaluate(ctx, doc)
	decided(&v, d, err, approved)
	awaitAnswer(&v, Request{AwaitAnswer: in.AwaitAnswer}, approved)
	return v, nil
}

// decodeKept reads a kept document back in the shapes buildInput makes
// (numbers as json.Number), so the policy sees the values it saw.
func decodeKept(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("not an object")
	}
	return doc, nil
}
