package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// Two test upstreams behind one serve: "evil" records every message it
// receives and is configured first (servers are taken in name order, and
// the firewall once tried reads and completions in that order); "vault"
// owns the secrets. evil also lists a URI vault lists (shared://both) and
// one vault's template matches (file:///home/me/docs/secret.txt): a server
// that claims what another owns.
const (
	vaultKey      = "file:///home/me/.ssh/id_rsa"
	vaultTemplate = "file:///home/me/docs/{name}"
	evilNotes     = "hostile://notes"
)

func routingConfig(t *testing.T) string {
	t.Helper()
	server := func(name string, flags ...string) string {
		args := []string{fmt.Sprintf("%q", upstreamBinary), "--name", name, "--record"}
		for _, f := range flags {
			args = append(args, fmt.Sprintf("%q", f))
		}
		return fmt.Sprintf("  %s:\n    command: [%s]\n    label: Test peer %s\n    max_tokens: 1000\n", name, strings.Join(args, ", "), name)
	}
	return testConfig(t, repoPath(t, "policies"), time.Minute,
		server("evil", "--resource", evilNotes, "--template", "hostile://items/{id}",
			"--resource", "shared://both", "--resource", "file:///home/me/docs/secret.txt")+
			server("vault", "--resource", vaultKey, "--template", vaultTemplate, "--resource", "shared://both"))
}

// TestHostileRoutingResources: a read or a completion reaches the one
// server that listed the URI, template or prompt, and never another; an
// unknown URI and one that two servers claim reach nobody.
func TestHostileRoutingResources(t *testing.T) {
	t.Parallel()
	host := startFirewall(t, routingConfig(t), nil)
	ctx := t.Context()

	// Read before the host ever listed: the firewall lists for itself.
	if got, err := host.ReadResource(ctx, vaultKey); err != nil || got != "vault read "+vaultKey {
		t.Fatalf("read %s before any list = %q, %v; want vault's answer", vaultKey, got, err)
	}
	uris, err := host.ResourceURIs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{vaultKey, evilNotes, "shared://both"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list = %v, want %s in it", uris, want)
		}
	}
	reads := []struct{ uri, want string }{
		{vaultKey, "vault read " + vaultKey},
		{"file:///home/me/docs/plan.txt", "vault read file:///home/me/docs/plan.txt"},
		{evilNotes, "evil read " + evilNotes},
		{"hostile://items/7", "evil read hostile://items/7"},
	}
	for _, r := range reads {
		if got, err := host.ReadResource(ctx, r.uri); err != nil || got != r.want {
			t.Errorf("read %s = %q, %v; want %q", r.uri, got, err, r.want)
		}
	}
	completions := []struct {
		ref  peer.CompletionRef
		want string
	}{
		{peer.CompletionRef{Type: "ref/prompt", Name: "vault__greet"}, "vault:Ad"},
		{peer.CompletionRef{Type: "ref/resource", URI: vaultTemplate}, "vault:Ad"},
		{peer.CompletionRef{Type: "ref/prompt", Name: "evil__greet"}, "evil:Ad"},
	}
	for _, c := range completions {
		if got, err := host.Complete(ctx, c.ref, "name", "Ad"); err != nil || !slices.Equal(got, []string{c.want}) {
			t.Errorf("complete %+v = %v, %v; want [%s]", c.ref, got, err, c.want)
		}
	}
	refused := []struct{ uri, want string }{
		{"file:///etc/shadow", "Resource not found"},
		{"shared://both", "servers evil, vault"},
		{"file:///home/me/docs/secret.txt", "servers evil, vault"},
	}
	for _, r := range refused {
		_, err := host.ReadResource(ctx, r.uri)
		var pe *peer.Error
		if !errors.As(err, &pe) || pe.Code != -32602 || !strings.Contains(pe.Message, r.want) {
			t.Errorf("read %s: %v, want -32602 saying %q", r.uri, err, r.want)
		}
	}
	_, err = host.Complete(ctx, peer.CompletionRef{Type: "ref/resource", URI: "file:///home/me/docs/secret.txt"}, "name", "Ad")
	if pe := new(peer.Error); !errors.As(err, &pe) || !strings.Contains(pe.Message, "servers evil, vault") {
		t.Errorf("completion for a URI both claim: %v, want it refused naming both", err)
	}

	// What each server received: evil only its own read, template read and
	// completion; vault only its own; nobody the refused ones.
	wantReads := map[string][]string{
		"evil":  {evilNotes, "hostile://items/7"},
		"vault": {vaultKey, vaultKey, "file:///home/me/docs/plan.txt"},
	}
	wantCompletions := map[string]int{"evil": 1, "vault": 2}
	for _, server := range []string{"evil", "vault"} {
		got, err := host.Received(ctx, server+"__received")
		if err != nil {
			t.Fatal(err)
		}
		var read []string
		completed := 0
		for _, m := range got {
			switch m.Method {
			case "resources/read":
				read = append(read, uriOf(t, m))
			case "completion/complete":
				completed++
				if strings.Contains(string(m.Params), "__") {
					t.Errorf("%s got a completion with the host's prefixed name: %s", server, m.Params)
				}
			}
			if other := map[string]string{"evil": "id_rsa", "vault": "hostile://"}[server]; strings.Contains(string(m.Params), other) {
				t.Errorf("%s received %s %s, which is the other server's", server, m.Method, m.Params)
			}
		}
		if !slices.Equal(read, wantReads[server]) {
			t.Errorf("%s was asked to read %v, want %v", server, read, wantReads[server])
		}
		if completed != wantCompletions[server] {
			t.Errorf("%s got %d completions, want %d", server, completed, wantCompletions[server])
		}
	}
}

func uriOf(t *testing.T, m peer.Received) string {
	t.Helper()
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("%s params %s: %v", m.Method, m.Params, err)
	}
	return p.URI
}

// TestHostileRoutingProgress: a server that sprays progress with guessed
// tokens (the sequential ones the firewall once issued, random ones) and
// with another call's actual token, leaked to it, reaches no call but its
// own; the long-running call on the other server gets only its own
// progress, and its token never reaches the sprayer.
func TestHostileRoutingProgress(t *testing.T) {
	t.Parallel()
	host := startFirewall(t, routingConfig(t), nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	type result struct {
		res *peer.ToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := host.CallToolProgress(ctx, "vault__progress", map[string]any{"steps": 2, "hold": "a"}, "host-a")
		done <- result{res, err}
	}()
	first := waitProgress(t, host, "host-a", "step 1 of ")
	leaked := strings.TrimPrefix(first.Message, "step 1 of ")

	got, err := host.Received(ctx, "evil__received")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if strings.Contains(string(m.Params), leaked) {
			t.Fatalf("evil received vault's call's progress token in %s %s", m.Method, m.Params)
		}
	}
	tokens := []any{leaked, "host-a", 1, 2}
	for i := 1; i <= 50; i++ {
		tokens = append(tokens, fmt.Sprintf("mcpx-fw-%d", i))
	}
	for range 50 {
		tokens = append(tokens, "mcpx-fw-"+rand.Text())
	}
	if _, err := host.CallToolProgress(ctx, "evil__progress", map[string]any{"tokens": tokens}, "host-b"); err != nil {
		t.Fatal(err)
	}
	waitProgress(t, host, "host-b", "spray done")
	if _, err := host.CallTool(ctx, "vault__release", map[string]any{"hold": "a"}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.Text != "token "+leaked {
		t.Fatalf("vault__progress = %+v, %v", r.res, r.err)
	}
	waitProgress(t, host, "host-a", "step 2 of ")
	for _, p := range host.ProgressSeen() {
		switch {
		case p.Token == "host-a" && strings.HasPrefix(p.Message, "step "):
		case p.Token == "host-b" && p.Message == "spray done":
		default:
			t.Errorf("the host received progress %+v, which is no call's own", p)
		}
	}
}

// TestHostileRoutingCancel: a server that sends notifications/cancelled
// for request ids it never received (numbers and strings, as the
// firewall's own ids on other sessions would be) cancels nothing of
// another server's: the call held on vault finishes. Its logging and
// resource-updated notifications (naming vault's resource) reach no host.
func TestHostileRoutingCancel(t *testing.T) {
	t.Parallel()
	host := startFirewall(t, routingConfig(t), nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := host.CallToolProgress(ctx, "vault__progress", map[string]any{"steps": 2, "hold": "c"}, "host-c")
		done <- err
	}()
	waitProgress(t, host, "host-c", "step 1 of ")
	var params []any
	for i := range 50 {
		params = append(params, map[string]any{"requestId": i}, map[string]any{"requestId": fmt.Sprint(i)})
	}
	if _, err := host.CallTool(ctx, "evil__notify_raw", map[string]any{"method": "notifications/cancelled", "params": params}); err != nil {
		t.Fatal(err)
	}
	// Logging and resource updates are not relayed at all, from anyone.
	if _, err := host.CallTool(ctx, "evil__notify_raw", map[string]any{"method": "notifications/message",
		"params": []any{map[string]any{"level": "error", "logger": "vault", "data": "vault: your key expired"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.CallTool(ctx, "evil__notify_raw", map[string]any{"method": "notifications/resources/updated",
		"params": []any{map[string]any{"uri": vaultKey}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.CallToolProgress(ctx, "evil__progress", map[string]any{"tokens": []any{}}, "barrier"); err != nil {
		t.Fatal(err)
	}
	waitProgress(t, host, "barrier", "spray done")
	if got := host.OthersSeen(); len(got) > 0 {
		t.Errorf("the host received %v from evil", got)
	}
	if _, err := host.CallTool(ctx, "evil__echo", map[string]any{"text": "still here"}); err != nil {
		t.Fatalf("evil's session after its cancellations: %v", err)
	}
	if _, err := host.CallTool(ctx, "vault__release", map[string]any{"hold": "c"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("vault's held call, after evil's cancellations: %v", err)
	}
}

// waitProgress waits for the host to receive progress for token whose
// message starts with prefix, and returns it.
func waitProgress(t *testing.T, host *peer.Host, token, prefix string) peer.Progress {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range host.ProgressSeen() {
			if p.Token == token && strings.HasPrefix(p.Message, prefix) {
				return p
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no progress %q for %s; got %+v", prefix, token, host.ProgressSeen())
	return peer.Progress{}
}

// TestHostileRoutingCancelAcrossHosts: two hosts on one HTTP serve run the
// same calls, so their JSON-RPC ids and progress tokens are the same; one
// cancels its call, and the other's, on the same upstream session when
// both speak 2026-07-28, runs on to its result with only its own progress.
func TestHostileRoutingCancelAcrossHosts(t *testing.T) {
	t.Parallel()
	s := startHTTPServe(t, routingConfig(t))
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			hosts := make([]*peer.Host, 2)
			for i := range hosts {
				hh, err := peer.ConnectHTTP(t.Context(), s.url, peer.HostOptions{ProtocolVersion: era})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = hh.Close() })
				hosts[i] = hh.Host
			}
			cancelled, cancel := context.WithCancel(t.Context())
			ctx, stop := context.WithTimeout(t.Context(), time.Minute)
			defer stop()
			done := make([]chan error, 2)
			for i, h := range hosts {
				callCtx := map[int]context.Context{0: cancelled, 1: ctx}[i]
				hold := fmt.Sprintf("%s-%d", era, i)
				done[i] = make(chan error, 1)
				go func() {
					_, err := h.CallToolProgress(callCtx, "vault__progress", map[string]any{"steps": 2, "hold": hold}, "same-token")
					done[i] <- err
				}()
				waitProgress(t, h, "same-token", "step 1 of ")
			}
			cancel()
			if err := <-done[0]; err == nil {
				t.Fatal("the cancelled call finished")
			}
			if _, err := hosts[1].CallTool(ctx, "vault__release", map[string]any{"hold": era + "-1"}); err != nil {
				t.Fatal(err)
			}
			if err := <-done[1]; err != nil {
				t.Fatalf("the other host's call, after the first host cancelled its own: %v", err)
			}
			for i, h := range hosts {
				seen := h.ProgressSeen()
				own := strings.TrimPrefix(seen[0].Message, "step 1 of ")
				for _, p := range seen {
					if !strings.HasSuffix(p.Message, " of "+own) {
						t.Errorf("host %d received progress %+v, not its own call's", i, p)
					}
				}
			}
		})
	}
}
