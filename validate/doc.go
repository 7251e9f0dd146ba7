// Package validate owns the structural validation of MCP sampling traffic:
// the params of a sampling/createMessage request sent by an upstream server,
// and the CreateMessageResult the host returns for it.
//
// Validation is pure: a function of the bytes, the protocol era of the
// upstream session and the capabilities the firewall advertised to it. It
// parses with its own strict reader (case-sensitive keys, unknown and
// duplicate keys rejected, invalid UTF-8, depth and size caps), collects
// every violation in document order under a stable rule id, and returns the
// parsed document so that policy judges exactly what will be forwarded.
//
// Caps on what is allowed (token budgets, MIME allow-lists, who may use
// tools) are policy and live in engine/ and the Rego; this package only says
// whether the message is well formed for its era.
//
// validate imports only the standard library. It does no I/O, keeps no
// state between calls and must not import engine, relay, cmd or the MCP SDK.
package validate
