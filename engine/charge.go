package engine

import (
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// A sampling request costs its owner what the model reads (its prompt:
// texts, images, audio, tool calls and definitions, by the one estimate of
// estimate.go, which the policy sees as facts.estimated_tokens) and what
// the model writes. Its server is charged so:
//
//   - When the request is first decided it counts as a request and, if it
//     may reach the model (let through, or held for a person who may let
//     it through), reserves its prompt's estimate plus its maxTokens.
//   - An approval re-decides it on its server's usage without its own
//     reservation, as the first decision saw the usage without itself,
//     and, when it passes, reserves it again for what the request (the
//     operator's edit, when they made one) may cost.
//   - Its completion settles the reservation: the prompt's estimate plus
//     what the model returned (the result's own count, else the estimate
//     of its content).
//   - A review that closes without the request reaching the host releases
//     the reservation (review.Settlement).
//
// Every change is made on the first decision, at the time the request
// arrived (review.Settlement says why), so a request counts once in each
// window, whenever it settles and whichever replica or era settles it.
//
// Tokens are sampling's alone. An elicitation counts as a request, in the
// same counters (a loop asking the user over and over is what the burst
// allowance is for), and costs no tokens; a roots list counts nothing:
// upstreams ask for it on every change of the list, and counting it would
// push their sampling into the burst allowance.

// charge is what a decision adds to its server's usage and what it does to
// the charge its request's first decision holds. a is the approval of a
// re-decision, nil for a first decision.
func charge(as *assessment, s Request, raw []byte, a *Approval) (review.Usage, *review.Settlement) {
	switch kind, stage := s.kindOf(), as.verdict.Stage; {
	case !charges(kind, stage), kind == KindElicitation && a != nil:
		return review.Usage{}, nil
	case kind == KindElicitation:
		return review.Usage{Requests: 1}, nil
	case stage == StageResult:
		return completionCharge(as, s, raw, a)
	}
	return requestCharge(as, a)
}

// requestCharge is a sampling request's charge at the request stage. The
// operator's CLI re-checks an item as serve re-decides it, and reserves it
// again the same way: the reservation is set, not added to, so the last
// re-decision before delivery stands.
func requestCharge(as *assessment, a *Approval) (review.Usage, *review.Settlement) {
	reserve, outcome := reservation(as), as.verdict.Outcome
	switch {
	case a == nil && reaches(outcome):
		return review.Usage{Requests: 1, RequestedTokens: reserve.RequestedTokens, Tokens: reserve.Tokens}, nil
	case a == nil:
		return review.Usage{Requests: 1}, nil
	case outcome == OutcomePass:
		return review.Usage{}, &review.Settlement{Reservation: a.DecisionID, Reserve: reserve}
	}
	return review.Usage{}, nil
}

// completionCharge is what a completion's first check charges: the
// settlement of its request's reservation, or, with none to settle, what
// it returned, on its own decision. Its re-check after an approval
// charges nothing.
func completionCharge(as *assessment, s Request, raw []byte, a *Approval) (review.Usage, *review.Settlement) {
	switch {
	case a != nil:
		return review.Usage{}, nil
	case s.Reservation == "":
		r := returnedTokens(as.result, raw)
		return review.Usage{ReturnedTokens: r, Tokens: r}, nil
	}
	return review.Usage{}, &review.Settlement{Reservation: s.Reservation, Completed: true, Returned: returnedTokens(as.result, raw)}
}

// reaches reports whether a request decided so may reach the model.
func reaches(o Outcome) bool { return o == OutcomePass || o == OutcomeEscalate }

// reservation is what the assessed sampling request reserves, by the
// facts the policy saw.
func reservation(as *assessment) review.Usage {
	facts, _ := as.input["facts"].(map[string]any)
	return Reservation(facts)
}

// Reservation is what a sampling request with these facts (Facts)
// reserves against its server's budget while it may reach the model: its
// maxTokens (RequestedTokens) and, in Tokens, those plus its prompt's
// estimate (estimated_tokens), each capped at maxCharge. The operator's
// tools show it beside a held request, counted as the charge counts it.
func Reservation(facts map[string]any) review.Usage {
	prompt, _ := facts["estimated_tokens"].(int)
	m := min(documentInt(facts["max_tokens"]), maxCharge)
	return review.Usage{RequestedTokens: m, Tokens: int64(prompt) + m}
}

// reservationOf is the decision whose charge stands for v's request: its
// first decision at the request stage (v's own when it reserved, the
// approved one for a re-decision), for the result stage to settle.
func reservationOf(v Verdict, s Request, a *Approval) string {
	switch {
	case v.Stage != StageRequest || s.kindOf() != KindSampling:
		return ""
	case a != nil:
		return a.DecisionID
	case reaches(v.Outcome):
		return v.DecisionID
	}
	return ""
}

// charges reports whether a decision of kind at stage may charge its
// server's usage (charge says how much): such decisions read usage,
// evaluate and commit in the server's turn (decideCharged). The others
// charge nothing, and need no turn.
func charges(kind Kind, stage Stage) bool {
	switch kind {
	case KindRoots:
		return false
	case KindElicitation:
		return stage == StageRequest
	}
	return true
}
