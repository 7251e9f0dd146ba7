# Package mcpxfw["default"] decides for every server that has no package of
# its own under mcpxfw.servers. It is conservative: anything unusual goes to
# a person, and only plain requests from configured servers pass on their own.
# The secret checks are in data.mcpxfw.baseline, which holds every server.
# ("default" is a Rego keyword, so the name is quoted; it is still
# data.mcpxfw.default.)
package mcpxfw["default"]

import data.mcpxfw.lib

# Tools let the host's model act for the upstream in a loop; a person should
# see the tool list first.
review contains {
	"code": "tools-offered",
	"message": $"the request offers {count(input.request.tools)} tool(s) to the model",
} if {
	lib.sampling
	lib.request_stage
	input.facts.has_tools
}

# A server the operator never configured has no cap and no owner, whatever
# it asks for. A roots list is judged when the host's list comes back, so
# it is held there too (a request-stage approval of it carries over in
# input.approved_codes).
review contains {
	"code": "unknown-server",
	"message": $"server {input.server.name} is not in the mcpx-fw configuration",
} if {
	unknown_server_stage
	not configured
}

unknown_server_stage if lib.request_stage

unknown_server_stage if lib.roots

# configured is true for servers named in the operator's configuration.
configured if data.mcpxfw.config.servers[input.server.name]

# Everything not held for review above may pass; the composition lets any
# review or deny win over this.
permit := true
