// Package peer holds small, real MCP peers for the tests: an upstream
// server whose `sample` tool pushes any sampling request it is given (with
// hostile, load and attack modes: testdata/upstream runs it), and a host
// client that starts a command over stdio and answers sampling with a
// function. Only tests and testdata import it: mcpx-fw itself never links
// it (imports_test.go holds that); the demo's peers are relay/demopeer.
// They speak through the Go MCP SDK, so this package lives under relay/,
// the only place that imports it; their API uses plain JSON so callers
// need not.
package peer
