package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/admit"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/pipeline"
	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/mcpx-fw/mcpx-fw/relay/seal"
)

// Rounds in the store: a round handed to a 2026-07-28 host is kept in the
// review store, under the nonce of its sealed state, so that the host's
// retry can be resumed by any replica that shares the store and the seal
// key, behind a balancer that sends each request anywhere. Taking the row
// deletes it in the same statement, which makes each state usable once
// across all replicas; the in-process nonce set (sealer.use) is kept only
// for what lives in one process's memory (bridged calls, a Proxy without a
// store), since spending a stored round there first would burn its state
// when the store failed to answer. The row is bound to the server and call
// the state was sealed for: a state whose nonce names another call's row
// finds nothing (review.Store.TakeContinuation).

// storedRound is a round's entries as the store keeps them.
type storedRound struct {
	Entries map[string]storedEntry `json:"entries"`
}

// storedEntry is one handed entry: its kind by name, the request as
// cleared (with the codes a person approved), the params it was decided
// on (engine.Request does not encode them), and its review. The request's
// Validated is a cache of this process's and is not kept: the result stage
// validates the params again.
type storedEntry struct {
	Kind     engine.Kind    `json:"kind"`
	Request  engine.Request `json:"request"`
	Params   []byte         `json:"params"`
	ReviewID string         `json:"review_id,omitempty"`
}

// encodeRound is entries as the store keeps them.
func encodeRound(entries map[string]pipeline.Entry) ([]byte, error) {
	r := storedRound{Entries: make(map[string]storedEntry, len(entries))}
	for key, e := range entries {
		s := e.Request
		s.Validated = nil
		r.Entries[key] = storedEntry{Kind: e.Kind.Name, Request: s, Params: s.Params, ReviewID: e.ReviewID}
	}
	return json.Marshal(r)
}

// decodeRound reads what encodeRound wrote.
func decodeRound(payload []byte) (map[string]pipeline.Entry, error) {
	var r storedRound
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("decode stored round: %w", err)
	}
	entries := make(map[string]pipeline.Entry, len(r.Entries))
	for key, e := range r.Entries {
		k := pipeline.Named(e.Kind)
		if k == nil { // the key is the upstream's: not quoted, as the error is logged
			return nil, errors.New("decode stored round: an entry of an unknown kind")
		}
		s := e.Request
		s.Params = e.Params
		entries[key] = pipeline.Entry{Kind: k, Request: s, ReviewID: e.ReviewID}
	}
	return entries, nil
}

// pollInterval is how often this process's polls of the store run when
// nothing announces a change: the store's PollInterval, or its default.
func (p *Proxy) pollInterval() time.Duration {
	if p.store.PollInterval > 0 {
		return p.store.PollInterval
	}
	return review.DefaultPollInterval
}

// putStored keeps a round's entries in the store and its admission here
// until the retry, the state's expiry or another replica's take.
func (p *Proxy) putStored(ctx context.Context, state string, cont seal.Continuation, entries map[string]pipeline.Entry, held *admit.Hold) error {
	payload, err := encodeRound(entries)
	if err != nil {
		return refusal.Internal("input requests could not be encoded")
	}
	err = p.store.PutContinuation(ctx, review.Continuation{Nonce: cont.Nonce, Server: cont.Server, Call: cont.Call,
		Expires: cont.Expires, Payload: payload})
	if err != nil {
		p.log.Error("round not stored for the host's retry", zap.String("server", cont.Server), zap.Int("bytes", len(payload)), zap.Error(err))
		return refusal.RoundNotStored()
	}
	if p.handed.keep(state, &handedRound{nonce: cont.Nonce, hold: held}, cont.Expires) {
		p.handed.startPoll(p)
	}
	return nil
}

// takeStored takes a round from the store, where any replica may have put
// it, with this process's admission of it when it was this one.
func (p *Proxy) takeStored(ctx context.Context, x *exchange, cont seal.Continuation, state string) (map[string]pipeline.Entry, *admit.Hold, error) {
	_, held, _ := p.handed.take(state)
	payload, err := p.store.TakeContinuation(ctx, cont.Nonce, cont.Server, cont.Call)
	if errors.Is(err, review.ErrContinuationGone) {
		held.Release()
		return nil, nil, p.stateRejected(x, fmt.Errorf("%w: %w", seal.ErrReplayed, err))
	}
	if err != nil {
		held.Release()
		p.log.Error("round not read back for the host's retry", zap.String("server", cont.Server), zap.Error(err))
		return nil, nil, refusal.RoundUnavailable()
	}
	entries, err := decodeRound(payload)
	if err != nil {
		held.Release()
		p.log.Error("stored round unreadable", zap.String("server", cont.Server), zap.Error(err))
		return nil, nil, refusal.Internal("input requests could not be decoded")
	}
	return entries, held, nil
}

// startPoll starts pollStored unless it runs.
func (h *handedRounds) startPoll(p *Proxy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.polling {
		h.polling = true
		go h.pollStored(p)
	}
}

// pollStored gives back the admission of every stored round another
// replica took (its row is gone), every poll interval while this process
// holds any, and at least four times a second (review.DefaultPollInterval):
// a take is announced to nobody, and the store's own interval is long
// where its waiters are woken by notifications (2s on PostgreSQL). Without
// it the round would count as in flight here until its state expired. A
// failed read changes nothing; the expiry still releases. An outage is
// logged when it starts and when it ends, not at every poll.
func (h *handedRounds) pollStored(p *Proxy) {
	tick := time.NewTicker(min(p.pollInterval(), review.DefaultPollInterval))
	defer tick.Stop()
	failing := false
	for range tick.C {
		nonces := h.storedNonces()
		if nonces == nil {
			return
		}
		held, err := p.store.HeldContinuations(context.Background(), nonces)
		switch {
		case err != nil && !failing:
			p.log.Warn("stored rounds not polled; until the store answers, their admission is given back only when their states expire", zap.Error(err))
		case err == nil && failing:
			p.log.Info("stored rounds polled again")
		}
		if failing = err != nil; failing {
			continue
		}
		h.releaseTaken(nonces, held)
	}
}

// storedNonces lists the stored rounds' nonces, or stops the poll (nil)
// when there are none: the next putStored starts another.
func (h *handedRounds) storedNonces() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var nonces []string
	for _, r := range h.rounds {
		if r.nonce != "" {
			nonces = append(nonces, r.nonce)
		}
	}
	if nonces == nil {
		h.polling = false
	}
	return nonces
}

// releaseTaken forgets the stored rounds among asked whose rows are not
// held, and releases their admission. Only the asked are screened: a round
// put after the read was not looked for. Each asked row was written
// before its round was kept here (putStored), so a missing one was taken
// or expired, and never comes back.
func (h *handedRounds) releaseTaken(asked []string, held map[string]bool) {
	gone := map[string]bool{}
	for _, n := range asked {
		if !held[n] {
			gone[n] = true
		}
	}
	h.mu.Lock()
	var released []*handedRound
	for state, r := range h.rounds {
		if gone[r.nonce] {
			released = append(released, r)
			delete(h.rounds, state)
		}
	}
	h.mu.Unlock()
	for _, r := range released {
		r.expiry.Stop()
		r.hold.Release()
	}
}
