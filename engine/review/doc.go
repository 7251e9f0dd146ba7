// Package review is the durable review queue: escalated requests an
// upstream made of the host (and the host's answers) wait here for an
// operator's decision.
//
// A review is durable state with a deadline, not a blocked call. Items live
// in a SQLite file in the state dir (reviews.db, dir 0700, file 0600, WAL),
// shared by every `mcpx-fw serve` process and by the operator's CLI in other
// processes. Waiters wake at once when their own Store decides an item and
// poll for decisions written by other processes. Every transition is one
// transaction with a conditional update plus one history row, so an answer
// is given at most once and the first answer stands.
//
// States move only pending -> approved | rejected | expired | abandoned and
// approved -> delivered | failed. An item whose waiting process died, or
// whose request was cancelled, becomes abandoned and can never be approved
// or delivered later; an item past its deadline becomes expired, never
// rejected, because nobody said no.
//
// An approval may carry the operator's edit of the request or completion
// (ApproveEdited) or a completion they wrote (Answer); the firewall
// re-decides and forwards that instead of the original, which is kept.
//
// Every transition also appends one entry to the audit log (auditChain): who,
// when, which decision and policy revision, digests of what was approved,
// and the outcome, each entry holding the hash of the one before, so
// VerifyAudit can name an entry edited, inserted or deleted behind the
// store's back. Retention (Prune) erases the prompt and completion text of
// finished items; the audit log keeps only digests and stays verifiable.
// Watch reports new items as they arrive, across processes.
//
// The package also keeps the firewall's decision records (RecordDecision),
// so the CLI can show why an item was escalated, and each server's usage,
// summed per window from buckets the database keeps (usage_buckets.go).
// UsageReader.Charge reads a server's usage, lets the engine decide on it
// and commits the decision with its charge in the server's turn (charge.go),
// so a budget is spent exactly across processes and replicas.
//
// The same Store can keep all of this in a PostgreSQL database instead
// (OpenURL), which several serve replicas share: every query is written
// once and a dialect adapts it (dialect.go, postgres.go); contract.go lists
// what both backends keep, and the tests run once on each. There a Store
// owns its waits by lease rather than by process id (leases), and every
// transition is announced at commit to the replicas that listen
// (listener), so a decision made anywhere wakes its waiter at once.
//
// The Store is the queue's state machine (queue.go, settle.go, decide.go,
// wait.go) with parts around it, each a type in its own file holding only
// the state it needs, so a method's receiver says what it may touch:
//
//   - storage (storage.go): the database, the write lock, the clock and the
//     log; every part shares it, and it knows nothing of items.
//   - auditChain (audit.go): appends, reads and verifies the audit log.
//   - ledger (ledger.go, usage.go, charge.go): decisions, their charges and
//     usage; what an entry opens in the queue it reaches through three
//     named steps of the Store.
//   - retention (prune.go): erases finished items' text and expired
//     continuations, through the audit chain and the queue's sweep.
//   - continuations (continuation.go): requests a retry may resume.
//   - leases (lease.go) and listener (listen.go), on PostgreSQL, sharing
//     replica (replica.go): the lease and its heartbeat, and the LISTEN
//     connection that wakes waiters.
//   - wakeups (wakeups.go) and dues (dues.go): in memory, the waiters'
//     wake-up channels and the monotonic deadlines of items this Store
//     opened.
//
// A part that needs nothing of the store is a package under internal/
// (internal/turn: a server's turn among this process's charges), and
// imports no mcpx-fw package.
//
// review owns its schema and its file. It imports no mcpx-fw package but
// its own parts (not engine, relay, cmd or validate) and no MCP SDK:
// engine, relay and cmd use it, never the other way round. Prompt text is
// never logged; log lines carry ids and sizes only.
package review
