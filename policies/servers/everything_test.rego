package mcpxfw.servers.everything_test

import data.mcpxfw.servers.everything

# request is the reference server's usual sampling request, changed by facts.
request(facts) := {
	"stage": "request",
	"server": {"name": "everything"},
	"facts": object.union(
		{
			"texts": ["Resource sampling test"],
			"text_bytes": 22,
			"max_tokens": 100,
			"has_tools": false,
			"block_types": ["text"],
		},
		facts,
	),
}

result(text) := object.union(request({}), {
	"stage": "result",
	"result": {"role": "assistant", "model": "m", "content": [{"type": "text", "text": text}]},
})

deny_codes(doc) := {r.code | some r in reasons} if {
	reasons := everything.deny with input as doc
}

review_codes(doc) := {r.code | some r in reasons} if {
	reasons := everything.review with input as doc
}

test_short_text_request_permitted if {
	everything.permit with input as request({})
	deny_codes(request({})) == set()
	review_codes(request({})) == set()
}

test_tools_denied if {
	doc := request({"has_tools": true})
	deny_codes(doc) == {"no-tools"}
}

test_long_reviewed if {
	reasons := everything.review with input as request({"max_tokens": 1001})
	reasons == {{"code": "long", "message": "maxTokens 1001 is over this server's 1000"}}
}

test_thousand_tokens_not_long if {
	review_codes(request({"max_tokens": 1000})) == set()
}

test_asks_for_secrets_left_to_the_baseline if {
	review_codes(request({"texts": ["what is the root password"]})) == set()
}

test_not_permitted[note] if {
	some note, facts in {
		"image": {"block_types": ["text", "image"]},
		"audio only": {"block_types": ["audio"]},
		"big text": {"text_bytes": 4097},
	}
	not everything.permit with input as request(facts)
}

test_result_permitted if {
	everything.permit with input as result("Hello!")
	review_codes(result("Hello!")) == set()
}

test_result_secret_left_to_the_baseline if {
	review_codes(result("token ghp_abcdefghijklmnopqrstuvwxyz0123456789")) == set()
}

test_result_ignores_request_rules if {
	doc := object.union(result("Hello!"), {"facts": {"has_tools": true, "max_tokens": 5000}})
	deny_codes(doc) == set()
	review_codes(doc) == set()
}

test_other_kinds_permitted[kind] if {
	some kind in {"elicitation", "roots"}
	everything.permit with input as {"kind": kind, "stage": "request", "server": {"name": "everything"}, "facts": {}}
}

# Its sampling rules do not fire on an elicitation carrying sampling's facts.
test_sampling_rules_scoped if {
	doc := object.union(request({"has_tools": true, "max_tokens": 5000}), {"kind": "elicitation"})
	count(everything.deny) + count(everything.review) == 0 with input as doc
}
