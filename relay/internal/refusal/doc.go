// Package refusal is the firewall's whole error vocabulary: every JSON-RPC
// error mcpx-fw itself sends, to an upstream or to a host, is built here,
// by ForVerdict for a verdict or by one constructor per situation. A
// message is short and fixed (it may name a configured server, a limit or
// a key the firewall minted, never text an upstream or a host wrote), and
// data is exactly {decision_id, reason_codes}, the decision id present
// where a decision exists. The one exception is -32021, whose data the
// spec fixes (requiredCapabilities), and -32042's, which carries the
// elicitations the firewall cleared. An upstream's own JSON-RPC error to a
// host's call is not the firewall's: it passes through like any result
// (PassedThrough).
//
// It is a leaf: it imports the engine's verdict types, validate's rule
// titles and the SDK's error type, nothing of relay.
package refusal
