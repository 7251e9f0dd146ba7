package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/console"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// TestConsoleRefusesABlocker: a held request that the policy now denies
// (a deny rule added while it waits) is a blocker: its review page has no
// approve button, and an approval posted anyway is refused with the item
// still pending.
func TestConsoleRefusesABlocker(t *testing.T) {
	policies := quotingPolicy(t)
	cfg := testConfig(t, policies, time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	consoleSample(t, host, `{"systemPrompt":"Be brief.","messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`)
	id := waitPending(t, cfg)
	writeFile(t, filepath.Join(policies, "servers"), "late.rego", "package mcpxfw.servers.peer\n\ndeny contains {\"code\": \"late-deny\", \"message\": \"denied since\"} if true\n")

	rt, err := startOperator(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.close()
	acts := consoleActions{rt: rt}
	ts := httptest.NewUnstartedServer(nil)
	s := console.New(acts, ts.Listener.Addr().String())
	ts.Config.Handler = s.Handler()
	ts.Start()
	defer ts.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if _, err := c.Get(ts.URL + s.LoginPath()); err != nil {
		t.Fatal(err)
	}
	page := consoleGet(t, c, ts.URL+"/review/"+id)
	if strings.Contains(page, `id="approve"`) || !strings.Contains(page, "late-deny") {
		t.Fatalf("the blocker's page offers approval or hides why:\n%s", page)
	}
	if err := acts.Approve(t.Context(), id, "", ""); err == nil || !strings.Contains(err.Error(), "blocker") {
		t.Fatalf("approve a blocker: %v, want refused as a blocker", err)
	}
	if it, err := rt.store.Get(t.Context(), id); err != nil || it.State != review.StatePending {
		t.Fatalf("after the refused approval: %v %v, want pending", it.State, err)
	}
}

func consoleGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
