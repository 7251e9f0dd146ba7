// Package hostcheck decides which Host values a local listener answers,
// against DNS rebinding: a page on another site whose name the attacker
// rebinds to this machine's address reaches the listener with the
// browser's cookies and permissions of a local client, but with that
// site's name in Host. A listener that answers only its own address
// refuses it. The review console and the ops listener both check Host
// here.
//
// It imports only the standard library.
package hostcheck
