package review

import "go.uber.org/zap"

// Opened is what Store.Opened is told of a review just opened: ids, the
// configured server name, the stage and the reason codes, never the
// request or the result. Codes are as the policy wrote them, and a policy
// can build one from its input: whoever shows them outside the firewall
// filters them first.
type Opened struct {
	ReviewID   string
	DecisionID string
	Server     string
	Stage      string
	Codes      []string
}

// opened is what follows the commit of p, whichever way p came into the
// queue (Commit, Charge, Add): its item's wait is due, the item is logged,
// and Store.Opened hears of it. Every review this Store opens passes
// here, so none is opened unannounced.
func (s *Store) opened(p pendingEntry) {
	it := p.item
	if it.ID == "" {
		return
	}
	s.dues.set(it.ID, p.due)
	s.log.Info("review opened", append(itemFields(it),
		zap.Int("request_bytes", len(it.Request)),
		zap.Int("result_bytes", len(it.Result)),
		zap.Time("expires_at", it.ExpiresAt))...)
	if s.Opened != nil {
		s.Opened(Opened{ReviewID: it.ID, DecisionID: it.DecisionID, Server: it.Server, Stage: it.Stage, Codes: reasonCodes(it.Reasons)})
	}
}

func reasonCodes(rs []Reason) []string {
	codes := make([]string, len(rs))
	for i, r := range rs {
		codes[i] = r.Code
	}
	return codes
}
