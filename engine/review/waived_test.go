package review

import (
	"slices"
	"testing"
	"time"
)

// TestWaivedKeptWithItem: the reasons waived on the decision that opened
// an item come back with it from every read (Get, List, Watch's rows).
func TestWaivedKeptWithItem(t *testing.T) {
	s := openStore(t, stateDir(t))
	it := sampleItem("a")
	it.Waived = []Reason{{Code: "asks-for-secrets", Message: "the prompt asks for a password"}}
	added := mustAdd(t, s, it, time.Minute)
	if got := mustGet(t, s, added.ID).Waived; !slices.Equal(got, it.Waived) {
		t.Errorf("Get: waived %v, want %v", got, it.Waived)
	}
	list, err := s.List(t.Context(), Filter{})
	if err != nil || len(list) != 1 || !slices.Equal(list[0].Waived, it.Waived) {
		t.Errorf("List: %+v %v, want the item with waived %v", list, err, it.Waived)
	}
	plain := mustAdd(t, s, sampleItem("a"), time.Minute)
	if got := mustGet(t, s, plain.ID).Waived; got != nil {
		t.Errorf("an item without waivers reads waived %v, want none", got)
	}
}

// TestWaivedOnItemsFromBefore: an item stored by a binary before waivers
// were kept (schema version 7) reads with none after the upgrade.
func TestWaivedOnItemsFromBefore(t *testing.T) {
	dir := stateDir(t)
	old := openAtVersion(t, dir, 7)
	at := now().UnixNano()
	_, err := old.ExecContext(t.Context(), `INSERT INTO items (id, parent, decision_id, server, label, stage, era,
		state, created_at, expires_at, reasons, request, result, context, owner)
		VALUES ('rv-old', '', 'dc-old', 'a', 'a', 'request', '2025-11-25', 'pending', ?, ?,
		'[{"code":"needs_review","message":"m"}]', NULL, NULL, NULL, '')`, at, at+int64(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	it := mustGet(t, openStore(t, dir), "rv-old")
	if it.Waived != nil || len(it.Reasons) != 1 {
		t.Errorf("old item: reasons %v waived %v, want its reason and no waivers", it.Reasons, it.Waived)
	}
}
