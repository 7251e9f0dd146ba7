package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
	"github.com/mcpx-fw/mcpx-fw/relay/sandbox"
)

// notifySend is the desktop notifier review.notify.desktop runs.
const notifySend = "notify-send"

// lookNotifyPaths fails, as a command server's missing command does, when what
// review.notify runs is not there: a notification configured but never
// shown leaves reviews to expire unseen, which is worse than not starting.
// The problem is placed at the key's line of cfg's file.
func lookNotifyPaths(cfg *config.Config) error {
	n := cfg.Review.Notify
	if n.Desktop {
		if _, err := exec.LookPath(notifySend); err != nil {
			const key = "review.notify.desktop"
			return fmt.Errorf("%s: %s: %s not found on PATH (install libnotify-bin, or set %s: false)", cfg.Place(key), key, notifySend, key)
		}
	}
	if len(n.Command) > 0 {
		if _, err := exec.LookPath(n.Command[0]); err != nil {
			const key = "review.notify.command"
			return fmt.Errorf("%s: %s: %s", cfg.Place(key), key, programNotFound)
		}
	}
	return nil
}

// programNotFound is the problem of a command whose program is not there.
// The program is not named: the line the problem names shows it, and
// what stands first in a command is sometimes a pasted NAME=secret.
const programNotFound = "its program (the first word) is not found: not on PATH, nor a file at that path"

// note is one review to announce, its facts already made safe to hand
// out (safeCodes), and how many more of its server's reviews it stands
// for (see pacer).
type note struct {
	id, server, stage string
	codes             []string
	more              int
}

// notifier runs review.notify's commands off the deciding goroutine: the
// store's Opened hook only paces and queues (never blocking), and
// MaxRunning workers run what is queued, each run bounded by Timeout.
type notifier struct {
	cfg   config.Notify
	log   *zap.Logger
	pace  *pacer
	queue chan note
	wg    sync.WaitGroup

	mu      sync.Mutex
	burst   int   // dropped since the queue was last empty
	dropped int64 // dropped since start
}

// startNotifier starts cfg's workers; stop (after the engine's last
// decision) kills what still runs and waits for them.
func startNotifier(ctx context.Context, cfg config.Notify, log *zap.Logger) (n *notifier, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	n = &notifier{cfg: cfg, log: log.Named("notify"), queue: make(chan note, cfg.MaxQueued)}
	n.pace = newPacer(cfg.MaxPerMinute, n.enqueue)
	for range cfg.MaxRunning {
		n.wg.Go(func() { n.work(ctx) })
	}
	return n, func() { n.pace.stop(); cancel(); n.wg.Wait(); n.endBurst() }
}

// opened is the store's Opened hook: it hands the review to the pacer,
// which queues it now or later.
func (n *notifier) opened(r review.Opened) {
	n.pace.opened(note{id: safeWord(r.ReviewID), server: safeWord(r.Server), stage: safeWord(r.Stage), codes: safeCodes(r.Codes)})
}

// enqueue queues nt, or drops it when MaxRunning are running and
// MaxQueued waiting. The first drop of a burst is logged at once, the
// burst's count when it ends: when a worker finds the queue empty.
func (n *notifier) enqueue(nt note) {
	select {
	case n.queue <- nt:
	default:
		n.drop(nt.id)
	}
}

func (n *notifier) drop(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.burst++
	n.dropped++
	if n.burst == 1 {
		n.log.Warn("review notifications dropped: too many at once", zap.String("review_id", id),
			zap.Int("max_running", n.cfg.MaxRunning), zap.Int("max_queued", n.cfg.MaxQueued))
	}
}

// endBurst logs how many a burst of drops lost, once it is over.
func (n *notifier) endBurst() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.burst == 0 {
		return
	}
	n.log.Warn("review notifications were dropped", zap.Int("dropped", n.burst), zap.Int64("dropped_total", n.dropped))
	n.burst = 0
}

func (n *notifier) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case nt := <-n.queue:
			n.announce(ctx, nt)
			if len(n.queue) == 0 {
				n.endBurst()
			}
		}
	}
}

// announce runs each configured notification for nt in turn.
func (n *notifier) announce(ctx context.Context, nt note) {
	env := notifyEnv(os.Environ(), nt)
	if n.cfg.Desktop {
		title := "mcpx-fw: review " + nt.id
		body := fmt.Sprintf("server %s, %s stage: %s", nt.server, nt.stage, strings.Join(nt.codes, ", "))
		if nt.more > 0 {
			body += fmt.Sprintf(" (and %d more reviews of this server)", nt.more)
		}
		n.run(ctx, nt, []string{notifySend, "--app-name=mcpx-fw", title, body}, env)
	}
	if len(n.cfg.Command) > 0 {
		n.run(ctx, nt, n.cfg.Command, env)
	}
}

// notifyOutputBytes caps what the service log keeps of a failed run's
// output.
const notifyOutputBytes = 1024

// run runs argv once, killing it (and what it started) after Timeout. Its
// output is kept, capped, only to log a failure.
func (n *notifier) run(ctx context.Context, nt note, argv []string, env []string) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	out := &cappedBuffer{max: notifyOutputBytes}
	cmd.Stdout, cmd.Stderr = out, out
	killGroup(cmd)
	cmd.WaitDelay = time.Second // a child that keeps the output open is not waited for
	start := time.Now()
	err := cmd.Run()
	fields := []zap.Field{zap.String("review_id", nt.id), zap.String("command", argv[0]), zap.Duration("took", time.Since(start))}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		n.log.Warn("review notification killed at its timeout", append(fields, zap.Duration("timeout", n.cfg.Timeout))...)
	case err != nil:
		n.log.Warn("review notification failed", append(fields, zap.Error(err), zap.ByteString("output", out.b))...)
	default:
		n.log.Debug("review notification sent", fields...)
	}
}

// notifyEnv is a notification's whole environment: the few variables of
// serve's an upstream command gets too (sandbox.Environ: never the
// credentials serve holds), the desktop session's (which notify-send
// needs to reach the desktop), and the review's facts.
func notifyEnv(parent []string, nt note) []string {
	own := map[string]string{
		"MCPXFW_REVIEW_ID": nt.id,
		"MCPXFW_SERVER":    nt.server,
		"MCPXFW_STAGE":     nt.stage,
		"MCPXFW_REASONS":   strings.Join(nt.codes, ","),
		"MCPXFW_MORE":      strconv.Itoa(nt.more),
	}
	for _, kv := range parent {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR":
			own[name] = value
		}
	}
	return sandbox.Environ(parent, own)
}

// safeCode is what a reason code must look like to leave the firewall in
// a notification. Codes are the policy author's words, but a policy can
// build one from its input, which the upstream wrote; so only short
// identifiers pass, with nothing a shell, a terminal or a notification's
// markup would read.
var safeCode = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// withheldCode stands for a code that is not a safeCode.
const withheldCode = "withheld-code"

// maxNotifyCodes bounds the codes one notification names.
const maxNotifyCodes = 16

// safeCodes are codes as a notification may show them (safeCode), at
// most maxNotifyCodes of them.
func safeCodes(codes []string) []string {
	out := make([]string, 0, min(len(codes), maxNotifyCodes))
	for _, c := range codes[:min(len(codes), maxNotifyCodes)] {
		out = append(out, safeWord(c))
	}
	return out
}

// safeWord is s when it is a safeCode, else withheldCode. Review ids,
// server names (config's serverName) and stages always are; checking them
// too keeps this the one gate.
func safeWord(s string) string {
	if safeCode.MatchString(s) {
		return s
	}
	return withheldCode
}

// cappedBuffer keeps the first max bytes written to it and discards the
// rest, so a chatty command cannot grow serve's memory.
type cappedBuffer struct {
	b   []byte
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
