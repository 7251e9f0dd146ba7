package main

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestPacerBoundsEachServer: a server opening a review a second is
// announced at most max times in any minute, the rest together, as the
// latest with how many more it stands for; another
// server is announced at once all the while; a server that stops is
// announced again at once a minute on; nothing is announced after stop.
func TestPacerBoundsEachServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		p := newPacer(2, func(nt note) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s %s +%d", nt.server, nt.id, nt.more))
		})
		sent := func() []string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}
		for i := range 100 { // one every 0.7 s for 70 s (off the minute's grid, so no two events coincide)
			p.opened(note{id: fmt.Sprintf("rv-%d", i), server: "flood"})
			if i == 10 {
				p.opened(note{id: "rv-quiet", server: "quiet"})
			}
			time.Sleep(700 * time.Millisecond)
		}
		want := []string{"flood rv-0 +0", "flood rv-1 +0", "quiet rv-quiet +0", "flood rv-85 +83", "flood rv-86 +0"}
		if g := sent(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("announced %q, want %q", g, want)
		}
		time.Sleep(time.Minute) // rv-87 to rv-99 wait for rv-85's minute to end
		want = append(want, "flood rv-99 +12")
		if g := sent(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("announced %q, want %q", g, want)
		}
		time.Sleep(2 * time.Minute)
		p.opened(note{id: "rv-later", server: "flood"})
		want = append(want, "flood rv-later +0")
		if g := sent(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("announced %q, want %q", g, want)
		}
		p.opened(note{id: "rv-a", server: "flood"})
		p.opened(note{id: "rv-b", server: "flood"}) // held
		p.stop()
		time.Sleep(2 * time.Minute)
		want = append(want, "flood rv-a +0")
		if g := sent(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("after stop, announced %q, want %q", g, want)
		}
	})
}
