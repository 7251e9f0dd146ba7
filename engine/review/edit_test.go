package review

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestApproveEditedKeepsOriginalEditAndDiff(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := mustAdd(t, s, sampleItem("alpha"), time.Hour)
	edit := Edit{Value: json.RawMessage(`{"maxTokens":10}`), Diff: "-maxTokens: 64\n+maxTokens: 10\n"}
	got, err := s.ApproveEdited(t.Context(), it.ID, "alice", "trimmed", edit)
	if err != nil {
		t.Fatal(err)
	}
	stored := mustGet(t, s, it.ID)
	if string(stored.Request) != string(it.Request) || string(stored.Edited) != string(edit.Value) ||
		stored.EditDiff != edit.Diff || stored.State != StateApproved || got.DecidedBy != "alice" {
		t.Errorf("stored %+v; want the original request, the edit and its diff, approved by alice", stored)
	}
	_, err = s.Approve(t.Context(), it.ID, "bob", "")
	wantDecided(t, err, StateApproved, "was already approved with edits by alice")
	if _, err := s.ApproveEdited(t.Context(), it.ID, "bob", "", Edit{Value: json.RawMessage(`{`)}); err == nil ||
		!strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid edit: %v", err)
	}
}

func TestAnswerIsForRequestsOnly(t *testing.T) {
	s := openStore(t, stateDir(t))
	completion := json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`)
	res := sampleItem("alpha")
	res.Stage, res.Result = StageResult, completion
	held := mustAdd(t, s, res, time.Hour)
	if _, err := s.Answer(t.Context(), held.ID, "alice", "", completion); err == nil || !strings.Contains(err.Error(), "approve --edit") {
		t.Errorf("answering a result-stage item: %v; want a refusal pointing at approve --edit", err)
	}
	if mustGet(t, s, held.ID).State != StatePending {
		t.Error("a refused answer changed the item")
	}
	it := mustAdd(t, s, sampleItem("alpha"), time.Hour)
	if _, err := s.Answer(t.Context(), it.ID, "alice", "", completion); err != nil {
		t.Fatal(err)
	}
	_, err := s.Reject(t.Context(), it.ID, "bob", "")
	wantDecided(t, err, StateApproved, "was already answered by alice")
}

// TestResultItemLinksToItsRequestReview: a result-stage item opened under
// WithParent (as the engine does for the relay) links to the request's
// review; one opened without it stands alone.
func TestResultItemLinksToItsRequestReview(t *testing.T) {
	s := openStore(t, stateDir(t))
	req := mustAdd(t, s, sampleItem("alpha"), time.Hour)
	res := sampleItem("alpha")
	res.Stage, res.Result = StageResult, json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`)
	linked, err := s.Add(WithParent(t.Context(), req.ID), res, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if stored := mustGet(t, s, linked.ID).Parent; linked.Parent != req.ID || stored != req.ID {
		t.Errorf("parent = %q, stored %q; want %s", linked.Parent, stored, req.ID)
	}
	if alone := mustAdd(t, s, res, time.Hour); mustGet(t, s, alone.ID).Parent != "" {
		t.Error("an item opened without lineage has a parent")
	}
}
