package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// restrict drops, for the launcher's thread and so for the command it
// forks, what the namespaces leave open:
//   - no-new-privs: no set-user-ID program or file capability raises the
//     command's privileges (sudo cannot run as root from inside);
//   - where Landlock can scope (ABI 6, Linux 6.12), abstract unix sockets
//     and signals: the command can neither connect to an abstract socket
//     made outside its sandbox (an X11 display, a session bus listening
//     there: ways to run commands outside, as the user) nor signal a
//     process outside it. Paths are not Landlock's job here: the mounts
//     hide them. An older kernel skips this layer.
func restrict() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no-new-privs: %w", err)
	}
	return scopeLandlock()
}

// landlockScopes is the first Landlock ABI with scopes.
const landlockScopes = 6

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field, the
// part this ABI reads.
type rulesetAttr struct {
	handledAccessFS, handledAccessNet, scoped uint64
}

func scopeLandlock() error {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || int(abi) < landlockScopes {
		return nil // no Landlock, or too old to scope
	}
	attr := rulesetAttr{scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: %w", errno)
	}
	return nil
}
