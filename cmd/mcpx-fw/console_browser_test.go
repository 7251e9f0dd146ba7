package main

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"github.com/mcpx-fw/mcpx-fw/relay/peer"
)

// htmlAttack is attack (render_e2e_test.go) with markup that would run a
// script if a page took it as HTML: each sets the canary global.
const htmlAttack = attack + `<script>window.__mcpxfwCanary=1<\/script><img src=x onerror=\"window.__mcpxfwCanary=2\"><svg onload=\"window.__mcpxfwCanary=3\">`

// TestConsoleApprovesThroughTheBrowser: with the console open on the
// queue, a hostile upstream's request (the hostile corpus in every field,
// plus markup that sets a canary global) appears without a reload; its
// review page runs none of it and shows no raw control character;
// approving it in the page lets the host's model answer, and approving
// the held completion (stage two) delivers it to the upstream.
func TestConsoleApprovesThroughTheBrowser(t *testing.T) {
	ctx := browser(t)
	cfg := testConfig(t, quotingPolicy(t), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	inPage(t, ctx, "sign in", chromedp.Navigate(startConsole(t, cfg)), chromedp.WaitVisible(chromedp.CSS(`#queue`)))

	done := consoleSample(t, host, strings.NewReplacer("ATTACK", htmlAttack).Replace(attackRequestTemplate))
	inPage(t, ctx, "the review appears live", chromedp.WaitVisible(chromedp.CSS(`a.review-link`)))
	screenshot(t, ctx, "console-queue.png")
	openListedReview(t, ctx, "open it")
	inPage(t, ctx, "its page", chromedp.WaitVisible(chromedp.CSS(`#doc`)))
	checkInertPage(t, ctx)
	if cost := read(t, ctx, "read the cost", chromedp.Text(chromedp.CSS(`#cost`))); !strings.Contains(cost, "maxTokens: 300") {
		t.Errorf("the cost beside the approve button reads %q, want maxTokens: 300", cost)
	}
	screenshot(t, ctx, "console-review.png")
	inPage(t, ctx, "approve the request", chromedp.Click(chromedp.CSS(`#approve`)), chromedp.WaitNotPresent(chromedp.CSS(`#approve`)))
	modelAsked(t, ctx, host)

	inPage(t, ctx, "the queue", chromedp.Navigate(consoleRoot(ctx)))
	openListedReview(t, ctx, "the completion's review appears")
	inPage(t, ctx, "approve the completion", chromedp.WaitVisible(chromedp.CSS(`#approve`)),
		chromedp.Click(chromedp.CSS(`#approve`)), chromedp.WaitNotPresent(chromedp.CSS(`#approve`)))
	checkOutcome(t, outcome(t, ctx, done), 0, "")
}

// TestConsoleEditsAndRejects: an invalid edit is refused in place with the
// item still pending; a valid edit of the prompt reaches the host's model
// as edited; rejecting the completion gives the upstream -1.
func TestConsoleEditsAndRejects(t *testing.T) {
	ctx := browser(t)
	cfg := testConfig(t, quotingPolicy(t), time.Minute, peerServer("peer", 1000))
	host := startFirewall(t, cfg, answerWith(hostAnswer))
	inPage(t, ctx, "sign in", chromedp.Navigate(startConsole(t, cfg)), chromedp.WaitVisible(chromedp.CSS(`#queue`)))

	done := consoleSample(t, host, `{"systemPrompt":"Be brief.","messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`)
	openListedReview(t, ctx, "open the review")
	inPage(t, ctx, "its page", chromedp.WaitVisible(chromedp.CSS(`#doc`)))
	doc := read(t, ctx, "read the document", chromedp.Value(chromedp.CSS(`#doc`)))
	inPage(t, ctx, "a broken edit is refused in place", chromedp.SetValue(chromedp.CSS(`#doc`), "messages: [\n"), chromedp.Click(chromedp.CSS(`#approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#refusal`)), chromedp.WaitVisible(chromedp.CSS(`#approve`)))
	edited := strings.Replace(doc, "Say hello.", "Say goodbye.", 1)
	if edited == doc {
		t.Fatalf("the document does not show the prompt:\n%s", doc)
	}
	inPage(t, ctx, "approve the edit", chromedp.SetValue(chromedp.CSS(`#doc`), edited), chromedp.Click(chromedp.CSS(`#approve`)), chromedp.WaitNotPresent(chromedp.CSS(`#approve`)))
	if asked := modelAsked(t, ctx, host); !strings.Contains(asked, "Say goodbye.") || strings.Contains(asked, "Say hello.") {
		t.Fatalf("the host's model was asked %s, want the edited prompt", asked)
	}

	inPage(t, ctx, "the queue", chromedp.Navigate(consoleRoot(ctx)))
	openListedReview(t, ctx, "the completion's review appears")
	inPage(t, ctx, "reject the completion", chromedp.WaitVisible(chromedp.CSS(`#reject`)), chromedp.SendKeys(chromedp.CSS(`#reason`), "not today"),
		chromedp.Click(chromedp.CSS(`#reject`)), chromedp.WaitNotPresent(chromedp.CSS(`#reject`)))
	checkOutcome(t, outcome(t, ctx, done), -1, "")
}

// consoleSample has the test upstream push raw to the host through the
// firewall, and returns where its outcome arrives.
func consoleSample(t *testing.T, host *peer.Host, raw string) chan *peer.SampleOutcome {
	done := make(chan *peer.SampleOutcome, 1)
	go func() {
		got, err := host.SampleRaw(t.Context(), []byte(raw))
		if err != nil {
			if t.Context().Err() == nil { // else the test has ended, and with it the host
				t.Errorf("sample: %v", err)
			}
			got = &peer.SampleOutcome{Error: &peer.Error{Code: 0, Message: err.Error()}}
		}
		done <- got
	}()
	return done
}

// consoleRoot is the queue's address on the console the tab shows.
func consoleRoot(ctx context.Context) string {
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	i := strings.Index(strings.TrimPrefix(loc, "http://"), "/")
	return loc[:len("http://")+i] + "/"
}

// checkInertPage: no upstream script ran (the canary global is unset) and
// the page's text holds no raw control, bidi or invisible character.
func checkInertPage(t *testing.T, ctx context.Context) {
	t.Helper()
	canary := read(t, ctx, "read the canary", chromedp.Evaluate[bool](`window.__mcpxfwCanary !== undefined`))
	text := read(t, ctx, "read the page", chromedp.Evaluate[string](`document.body.innerText`))
	doc := read(t, ctx, "read the document", chromedp.Value(chromedp.CSS(`#doc`)))
	if canary {
		t.Error("a script the upstream wrote ran in the console")
	}
	for _, s := range []string{text, doc} {
		for _, r := range s {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff' || r == '\u00ad') {
				t.Errorf("the page shows %U as it is", r)
			}
		}
	}
	if !strings.Contains(text, `\x1b[2J`) || !strings.Contains(text, "<script>window.__mcpxfwCanary") {
		t.Error("the page does not show the hostile text escaped")
	}
}

// modelAsked is the next request the host's model got; the test fails with
// the page's text if none comes within a minute.
func modelAsked(t *testing.T, ctx context.Context, host *peer.Host) string {
	t.Helper()
	select {
	case a := <-host.Asked:
		return string(a)
	case <-time.After(time.Minute):
		t.Fatalf("the host's model was never asked; the page says:\n%s", pageText(ctx))
		return ""
	}
}

// outcome is what the upstream got, within a minute.
func outcome(t *testing.T, ctx context.Context, done chan *peer.SampleOutcome) *peer.SampleOutcome {
	t.Helper()
	select {
	case got := <-done:
		return got
	case <-time.After(time.Minute):
		t.Fatalf("the upstream got nothing; the page says:\n%s", pageText(ctx))
		return nil
	}
}

func pageText(ctx context.Context) string {
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	return text
}
