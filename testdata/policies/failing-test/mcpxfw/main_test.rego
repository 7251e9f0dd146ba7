package mcpxfw_test

import data.mcpxfw

test_permits if {
	mcpxfw.decision.outcome == "permit"
}

test_denies if {
	mcpxfw.decision.outcome == "deny"
}
