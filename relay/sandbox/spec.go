package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Spec is one command to start isolated.
type Spec struct {
	Args []string // the command and its arguments, as configured
	Env  []string // its whole environment (see Environ)
	Dir  string   // its working folder; "" for the caller's
	// Hide are absolute paths the command must not reach: each existing
	// folder is replaced by an empty read-only one, each existing file by
	// an empty one. A path that does not exist when the command starts has
	// nothing to hide and is skipped.
	Hide []string
	// ReadOnly are absolute paths the command may read but not change
	// (the user's entry points: OperatorPaths): each existing
	// one is bound onto itself read-only, a folder with all below it, and
	// neither it, the folders above it nor a symbolic link on the way to
	// it can be moved, removed or replaced. A path that does not exist is
	// skipped; one inside a hidden path stays hidden.
	ReadOnly []string
}

// launch is what the launcher is told, as JSON in its environment
// (specEnv), which holds nothing else: never a shell, never an argument
// list a process listing shows.
type launch struct {
	Path     string   `json:"path"` // the program, resolved as os/exec resolves it
	Args     []string `json:"args"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"` // absolute: resolved again after the mounts
	Hide     []string `json:"hide"`
	ReadOnly []string `json:"read_only"`
	UID      int      `json:"uid"` // the caller's ids, which the command runs as
	GID      int      `json:"gid"`
}

// The launcher and the probe's check are told apart from every other run of
// the binary by argv[0] and a spec in the environment, both of which only
// this package sets.
const (
	specEnv     = "MCPXFW_SANDBOX_SPEC"
	launcherArg = "mcpx-fw-launcher"
	checkArg    = "mcpx-fw-launcher-check"
)

// Exit statuses of the launcher itself, as env(1) and shells use them.
const (
	exitSetup   = 125 // the sandbox could not be made: nothing ran
	exitNoStart = 127 // the command could not be started
)

// Main runs the launcher (or the probe's check) when this process was
// started as one, and then never returns; otherwise it returns at once.
// Call it first in main, and in TestMain of tests that start isolated
// commands: the launcher is this very binary.
func Main() {
	if len(os.Args) == 0 || (os.Args[0] != launcherArg && os.Args[0] != checkArg) {
		return
	}
	var l launch
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		fail(exitSetup, errors.New("started without a spec; this mode is for mcpx-fw serve only"))
	}
	os.Clearenv()
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		fail(exitSetup, fmt.Errorf("spec: %w", err))
	}
	if os.Args[0] == checkArg {
		os.Exit(verify(l.Hide, l.ReadOnly))
	}
	os.Exit(runLauncher(l))
}

// fail ends the launcher with one line on stderr, which serve logs as the
// upstream's.
func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "mcpx-fw launcher:", err)
	os.Exit(code)
}
