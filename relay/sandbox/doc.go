// Package sandbox starts an upstream server's command the way the firewall
// wants every stdio upstream started: with a short allow-list of the
// firewall's environment plus the server's own variables (Environ), and on
// Linux inside unprivileged user, mount, PID and IPC namespaces that hide
// the firewall's own files and give it temporary folders and terminals of
// its own (Command).
//
// The upstream is the party under suspicion. As the same OS account as
// serve, it could otherwise run `mcpx-fw review approve` on its own
// escalation, write the review queue, read the seal key, the config and the
// policies, or read another server's credentials from serve's environment;
// and it could read or swap what the user's other processes keep in the
// shared temporary folders, read and write the operator's terminal, or
// write what the operator's shell, editor or login runs next (a start-up
// file, a program on PATH: OperatorPaths).
//
// Isolation is done by the firewall's own binary, re-executed through
// /proc/self/exe in a launcher mode (Main, which main and the TestMain of
// every test binary that starts isolated commands call first). The
// launcher is PID 1 of a new PID namespace, root of a new user namespace
// mapped to the caller's uid, in new mount and IPC namespaces: it makes
// every mount private, mounts an empty tmpfs of the command's own over
// /tmp, /var/tmp and /dev/shm (TMPDIR is its /tmp: IsolatedEnviron) and a
// new devpts instance over /dev/pts, pins the folders above each hidden
// or read-only path and the symbolic links on the way to a read-only one
// (so they cannot be renamed to swap in another state dir or start-up
// file), binds each read-only path onto itself read-only, covers each
// hidden path (an empty read-only tmpfs over a folder, /dev/null over a
// file), mounts a fresh /proc, and starts the real command in a further user and mount
// namespace, where every one of those mounts is locked: the upstream, even
// as root inside, cannot unmount them. It forwards signals, reaps orphans
// and exits with the command's status; when it dies, the kernel kills
// everything in its PID namespace, so no upstream outlives serve.
//
// It imports only the standard library and golang.org/x/sys.
package sandbox
