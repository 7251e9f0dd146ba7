package config

import (
	"time"

	"github.com/spf13/viper"
)

// Notify is review.notify: how serve announces each review it opens
// to a person who is not watching the queue. Off by default.
type Notify struct {
	// Desktop runs notify-send (libnotify) for each review; serve and
	// check refuse to start when it is not on PATH.
	Desktop bool `mapstructure:"desktop"`
	// Command is a command and its arguments, run without a shell for
	// each review with the review's facts in its environment
	// (cmd/mcpx-fw's notifyEnv); [] is off.
	Command []string `mapstructure:"command"`
	// Timeout is how long one run may take before it is killed, with
	// everything it started.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRunning bounds the notifications running at once, MaxQueued the
	// ones waiting; past both a review is not announced (counted and
	// logged), so an upstream flooding escalations cannot fork-bomb the
	// machine.
	MaxRunning int `mapstructure:"max_running"`
	MaxQueued  int `mapstructure:"max_queued"`
	// MaxPerMinute bounds how often one server's reviews are announced:
	// past it in any minute they are held and announced together, as one
	// run naming the latest and how many more (cmd/mcpx-fw's pacer).
	MaxPerMinute int `mapstructure:"max_per_minute"`
}

func setNotifyDefaults(v *viper.Viper) {
	v.SetDefault("review.notify.desktop", false)
	v.SetDefault("review.notify.command", []string{})
	v.SetDefault("review.notify.timeout", "10s")
	v.SetDefault("review.notify.max_running", 2)
	v.SetDefault("review.notify.max_queued", 16)
	v.SetDefault("review.notify.max_per_minute", 6)
}

func (n Notify) verify(bad func(string, string, ...any)) {
	switch {
	case len(n.Command) == 0:
	case n.Command[0] == "":
		bad("review.notify.command", "the command's first element is empty")
	case commandLine(n.Command[0], ""):
		bad("review.notify.command", "%s", commandLineHint(false))
	}
	positive(bad, "review.notify.timeout", n.Timeout)
	if n.MaxRunning < 1 {
		bad("review.notify.max_running", "must be at least 1")
	}
	if n.MaxQueued < 0 {
		bad("review.notify.max_queued", "must be 0 or more")
	}
	if n.MaxPerMinute < 1 {
		bad("review.notify.max_per_minute", "must be at least 1")
	}
}

// On is whether any notification is configured.
func (n Notify) On() bool { return n.Desktop || len(n.Command) > 0 }
