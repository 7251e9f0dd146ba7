// Package relay is the wire: an MCP server facing the host, MCP clients
// facing the configured upstream servers, and the firewall between them.
// What an upstream asks of the host (sampling, elicitation, roots) goes
// through one pipeline (package relay/internal/pipeline, with its one kind
// table): the engine decides it and, when escalated, it waits on the
// review queue; the host's answer is checked the same way. relay gives it
// each request's source (source, in pipeline.go) and the way to ask the
// host (sessionAsker). Everything else passes through unchanged.
//
// relay is the only package that imports the MCP SDK. It keeps the SDK's
// types to itself and speaks to the engine in bytes and mcpx-fw types.
// Verdicts become JSON-RPC errors in exactly one function, refusal.ForVerdict.
package relay
