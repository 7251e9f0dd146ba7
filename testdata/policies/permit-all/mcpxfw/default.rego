# A fallback that permits everything, for tests that need the real
# composition (mcpxfw/main.rego, kept identical to policies/) without any
# rule getting in the way.
package mcpxfw["default"]

permit := true
