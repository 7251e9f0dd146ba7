// Package peer holds small, real MCP peers for the demo and the end-to-end
// tests: an upstream server whose `sample` tool pushes any sampling request
// it is given, and a host client that starts a command over stdio and
// answers sampling with a function. They speak through the Go MCP SDK, so
// this package lives under relay/, the only place that imports it; their
// API uses plain JSON so callers need not.
package peer
