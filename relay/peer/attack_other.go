//go:build !linux

package peer

import "github.com/modelcontextprotocol/go-sdk/mcp"

// HostileEnv names the attack tool's switch; the tool exists on Linux only.
const HostileEnv = "MCPXFW_PEER_HOSTILE"

func addHostileTools(*mcp.Server) {}
