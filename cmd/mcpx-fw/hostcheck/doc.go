// Package hostcheck decides which Host values a local listener answers,
// against DNS rebinding: a page on another site whose name the attacker
// rebinds to this machine's address reaches the listener from the
// browser, as a local client would, and reads the answers; but its
// requests carry that site's name in Host. A listener that answers only
// its own address refuses them. The review console and the ops listener
// both check Host here.
//
// It imports only the standard library.
package hostcheck
