package mcpxfw.global_test

import data.mcpxfw.global

config := {"default": "review", "servers": {"everything": {"label": "Everything", "max_tokens": 4096}}}

request(facts) := {
	"stage": "request",
	"server": {"name": "everything"},
	"facts": object.union({"include_context": "none", "max_tokens": 100}, facts),
}

test_include_context_none_passes if {
	count(global.deny) == 0 with input as request({})
}

test_include_context_denied[value] if {
	some value in {"thisServer", "allServers"}
	codes := {r.code | some r in global.deny} with input as request({"include_context": value})
	codes == {"include-context"}
}

test_include_context_denied_at_result_stage if {
	doc := object.union(request({"include_context": "allServers"}), {"stage": "result"})
	{r.code | some r in global.deny} == {"include-context"} with input as doc
}

test_max_tokens_above_cap_denied if {
	reasons := global.deny with input as request({"max_tokens": 4097}) with data.mcpxfw.config as config
	reasons == {{
		"code": "max-tokens",
		"message": "maxTokens 4097 is above this server's cap of 4096",
	}}
}

test_max_tokens_at_cap_passes if {
	count(global.deny) == 0 with input as request({"max_tokens": 4096}) with data.mcpxfw.config as config
}

test_max_tokens_without_config_passes if {
	count(global.deny) == 0 with input as request({"max_tokens": 1000000})
}

test_max_tokens_uses_only_this_servers_cap if {
	doc := object.union(request({"max_tokens": 5000}), {"server": {"name": "other"}})
	count(global.deny) == 0 with input as doc with data.mcpxfw.config as config
}

test_both_denials if {
	doc := request({"include_context": "thisServer", "max_tokens": 9000})
	{r.code | some r in global.deny} == {"include-context", "max-tokens"} with input as doc
		with data.mcpxfw.config as config
}
