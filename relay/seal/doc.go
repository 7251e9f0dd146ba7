// Package seal seals the requestState a 2026-07-28 host is handed and
// opens it on the host's retry.
//
// A 2026-07-28 host must echo requestState exactly, but the spec also says
// the state is attacker-controlled: the host, or anything between it and
// us, can alter it, replay it, keep it past its time, or paste it into a
// call to another server or with other arguments. The firewall decides
// things from the state (which upstream to resume, which input keys were
// asked, which bridged call is parked), so it is sealed: an HMAC binds the
// payload to this firewall's key, the payload binds it to one server, one
// call and a deadline, and a one-time nonce stops replays.
//
// The package owns the seal key (the state dir's, or one file replicas
// share), the MAC, and the set of nonces spent in this process. It
// imports nothing of relay: its refusals are sentinel errors, and relay
// turns each into the words the host sees. A Sealer may be used from any
// goroutine.
package seal
