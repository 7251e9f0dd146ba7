// Package relay is the wire: an MCP server facing the host, MCP clients
// facing the configured upstream servers, and the sampling firewall between
// them. Everything but sampling passes through unchanged; sampling goes
// through the engine and, when escalated, waits on the review queue.
//
// relay is the only package that imports the MCP SDK. It keeps the SDK's
// sampling types to itself and speaks to the engine in bytes and mcpx-fw
// types. Verdicts become JSON-RPC errors in exactly one function,
// wireError.
package relay
