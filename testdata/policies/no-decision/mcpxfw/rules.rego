# Rules, but no composition: nothing defines data.mcpxfw.decision.
package mcpxfw.servers.everything

permit := true
