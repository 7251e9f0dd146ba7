// Package console is mcpx-fw's review console: a local web page on which
// an operator reads the review queue and decides it, over the same store
// and the same rules as the review commands.
//
// Everything an upstream wrote reaches the page through inert (control,
// bidi and invisible characters shown as escapes) and then HTML escaping
// (markup.go), and the page runs no script but its own embedded file
// under a strict Content-Security-Policy. The console is reachable only
// from the machine itself unless configured otherwise; a person signs in
// once with a link printed at start, and every action carries a per-session
// CSRF token. The rules that decide (re-deciding an approval, refusing a
// blocker, recording the operator) live in package main behind Actions: the
// console only gathers what the operator asks and shows what they decide.
package console
