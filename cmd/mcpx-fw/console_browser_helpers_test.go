package main

import (
	"bufio"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpx-fw/mcpx-fw/engine/review/pgtest"
)

// chromiumPath is Debian's chromium, which the browser tests drive.
const chromiumPath = "/usr/bin/chromium"

// updateScreenshots rewrites the console screenshots the README shows.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the console screenshots to console/testdata/screenshots")

// browser starts a headless Chromium with a fresh profile and returns a
// chromedp context on one tab. Without chromium the test skips, unless CI
// is set: there a missing browser is a broken machine.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if pgtest.InCI() {
			t.Fatalf("CI is set and %s is missing: install Debian's chromium", chromiumPath)
		}
		t.Skipf("%s is not installed: the console's browser tests skip", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// startConsole runs `mcpx-fw console` for cfg on a free loopback port and
// returns the sign-in link it printed.
func startConsole(t *testing.T, cfg string) string {
	t.Helper()
	cmd := exec.Command(binary, "console", "--config", cfg, "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	link := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "sign in at "); ok {
				link <- url
			}
		}
	}()
	select {
	case u := <-link:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("mcpx-fw console printed no sign-in link")
		return ""
	}
}

// screenshot writes what the window shows as name under the
// console's testdata when -update-screenshots is given.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*updateScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("console", "testdata", "screenshots", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// inPage runs actions in the browser, stopping the test on failure.
func inPage(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// read runs one action that returns a value, stopping the test on failure.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// openListedReview opens the first review the queue lists, by its
// address: the live queue is put in place anew on every change to the
// store, so a link one step finds may be gone when the next clicks it.
// Polling in the page finds the link and reads its address in one step.
func openListedReview(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	href := read(t, ctx, what, chromedp.Poll[string](`(document.querySelector("a.review-link") || {}).href`))
	inPage(t, ctx, what, chromedp.Navigate(href))
}
