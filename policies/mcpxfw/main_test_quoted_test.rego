# Package mcpxfw.servers["main-test-quoted"] is a server package with a quoted
# name the composition's tests decide with. Files ending _test.rego never
# decide a live request.
package mcpxfw.servers["main-test-quoted"]

import data.mcpxfw.lib

deny contains {"code": "media", "message": "main-test-quoted gets text only"} if {
	lib.sampling
	lib.request_stage
	some kind in input.facts.block_types
	kind in {"image", "audio"}
}

permit if {
	lib.sampling
	lib.request_stage
	every kind in input.facts.block_types {
		kind == "text"
	}
}
