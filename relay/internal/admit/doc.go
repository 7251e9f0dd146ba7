// Package admit is the resource gate: the limits on what upstreams may
// make the firewall hold (requests in flight, pending reviews, bytes), per
// configured server and per server within one host session, the holds
// that take and give back those tallies, and the counted, rate-limited log
// of the refusals. A host session is a string the relay gives it.
//
// It is a leaf: it imports the refusal vocabulary and the metrics, nothing
// of relay.
package admit
