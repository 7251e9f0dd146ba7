package review

import (
	"fmt"
	"sync"
	"testing"
)

// Decisions committed at once by many goroutines of a fresh Store, the
// first of which race to prepare the insert, are all stored and counted.
func TestConcurrentCommitsShareOneStatement(t *testing.T) {
	s := openStore(t, stateDir(t))
	at := now()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := s.Commit(t.Context(), Entry{
				Decision: Decision{ID: fmt.Sprintf("dc-%d", i), Server: "a", Stage: StageRequest, Outcome: "pass", CreatedAt: at},
				Usage:    Usage{Requests: 1, RequestedTokens: 10, Tokens: 10},
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.UsageIn(t.Context(), "a", usageWindows, at)
	if err != nil || got["minute"] != (Usage{Requests: 16, RequestedTokens: 160, Tokens: 160}) {
		t.Errorf("usage %v, %v; want 16 requests of 10 tokens", got, err)
	}
}
