package mcpxfw.main_test

import data.mcpxfw

config := {"default": "review", "servers": {
	"main_test_sampler": {"label": "Main test sampler", "max_tokens": 4096},
	"notes": {"label": "Notes", "max_tokens": 2048},
	"main-test-quoted": {"label": "Code review", "max_tokens": 4096, "budget": {"hourly_tokens": 10000, "burst_per_minute": 10}},
}}

# request is a plain one-message request from server, changed by facts.
request(server, facts) := {
	"version": "mcpxfw/v1",
	"kind": "sampling",
	"stage": "request",
	"server": {"name": server, "label": "", "protocol": "2025-11-25", "reported": {}},
	"host": {"protocol": "2025-11-25", "capabilities": {"sampling": {}}},
	"origin": {"method": "tools/call", "name": "test_sampling", "round": 0},
	"request": {
		"messages": [{"role": "user", "content": {"type": "text", "text": "Hello there"}}],
		"maxTokens": object.get(facts, "max_tokens", 100),
	},
	"result": null,
	"facts": object.union(
		{
			"message_count": 1, "text_bytes": 11, "image_bytes": 0, "audio_bytes": 0,
			"estimated_tokens": 3, "texts": ["Hello there"], "tool_names": [],
			"tool_result_count": 0, "include_context": "none", "max_tokens": 100,
			"has_tools": false, "block_types": ["text"],
		},
		facts,
	),
	"usage": usage(0, 0),
	"approval": null,
	"approved_codes": [],
	"violations": [],
}

# usage is input.usage with the given hour tokens and minute requests.
usage(tokens, requests) := {
	"minute": {"requests": requests, "requested_tokens": 0, "returned_tokens": 0, "tokens": 0},
	"hour": {"requests": requests, "requested_tokens": tokens, "returned_tokens": 0, "tokens": tokens},
}

approval := {"decision_id": "dc-1", "by": "alice", "at": "2026-01-02T03:04:05Z", "edited": false}

approved(doc) := object.union(doc, {"approval": approval})

result(doc, text) := object.union(doc, {
	"stage": "result",
	"result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": text}, "stopReason": "endTurn"},
})

# decide gives the decision for doc under the shipped configuration.
decide(doc) := d if {
	d := mcpxfw.decision with input as doc with data.mcpxfw.config as config
}

# summary keeps the outcome and the reason codes, which is what tests compare.
summary(d) := {
	"outcome": d.outcome,
	"deny": [r.code | some r in d.deny],
	"review": [r.code | some r in d.review],
}

test_decisions[note] if {
	some note, tc in {
		"short text permitted": {
			"in": request("main_test_sampler", {}),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"review": {
			"in": request("main_test_sampler", {"max_tokens": 2000}),
			"want": {"outcome": "review", "deny": [], "review": ["long"]},
		},
		"deny beats review": {
			"in": request("main_test_sampler", {"max_tokens": 2000, "has_tools": true}),
			"want": {"outcome": "deny", "deny": ["no-tools"], "review": ["long"]},
		},
		"global deny beats server permit": {
			"in": request("main_test_sampler", {"include_context": "thisServer"}),
			"want": {"outcome": "deny", "deny": ["include-context"], "review": []},
		},
		"global and server denies both listed": {
			"in": request("main_test_sampler", {"max_tokens": 5000, "has_tools": true}),
			"want": {"outcome": "deny", "deny": ["max-tokens", "no-tools"], "review": ["long"]},
		},
		"approval satisfies review": {
			"in": approved(request("main_test_sampler", {"max_tokens": 2000})),
			"want": {"outcome": "permit", "deny": [], "review": ["long"]},
		},
		"approval never satisfies deny": {
			"in": approved(request("main_test_sampler", {"has_tools": true})),
			"want": {"outcome": "deny", "deny": ["no-tools"], "review": []},
		},
		"approval satisfies the default": {
			"in": approved(request("main_test_sampler", {"block_types": ["image"]})),
			"want": {"outcome": "permit", "deny": [], "review": ["default-outcome"]},
		},
		"default when nothing decides": {
			"in": request("main_test_sampler", {"block_types": ["image"]}),
			"want": {"outcome": "review", "deny": [], "review": ["default-outcome"]},
		},
		"configured server without a package uses the fallback": {
			"in": request("notes", {}),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"fallback reviews tools": {
			"in": request("notes", {"has_tools": true}),
			"want": {"outcome": "review", "deny": [], "review": ["tools-offered"]},
		},
		"unknown server": {
			"in": request("stranger", {}),
			"want": {"outcome": "review", "deny": [], "review": ["unknown-server"]},
		},
		"unknown server still hits global denies": {
			"in": request("stranger", {"include_context": "allServers"}),
			"want": {"outcome": "deny", "deny": ["include-context"], "review": ["unknown-server"]},
		},
		"quoted server package decides": {
			"in": request("main-test-quoted", {"block_types": ["text", "image"]}),
			"want": {"outcome": "deny", "deny": ["media"], "review": []},
		},
		"quoted server package permits": {
			"in": request("main-test-quoted", {}),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"budget exhausted beats the server's permit": {
			"in": object.union(request("main-test-quoted", {"max_tokens": 500}), {"usage": usage(9600, 0)}),
			"want": {"outcome": "deny", "deny": ["budget-exhausted"], "review": []},
		},
		"burst reviewed": {
			"in": object.union(request("main-test-quoted", {}), {"usage": usage(0, 10)}),
			"want": {"outcome": "review", "deny": [], "review": ["burst"]},
		},
		"approval satisfies burst, never the budget": {
			"in": approved(object.union(request("main-test-quoted", {"max_tokens": 500}), {"usage": usage(9600, 10)})),
			"want": {"outcome": "deny", "deny": ["budget-exhausted"], "review": ["burst"]},
		},
		"result permitted": {
			"in": result(request("main_test_sampler", {}), "General Kenobi"),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"result with a secret reviewed": {
			"in": result(request("main_test_sampler", {}), "AKIAIOSFODNN7EXAMPLE"),
			"want": {"outcome": "review", "deny": [], "review": ["secret-in-completion"]},
		},
		"result from the fallback": {
			"in": result(request("stranger", {}), "-----BEGIN PRIVATE KEY-----"),
			"want": {"outcome": "review", "deny": [], "review": ["secret-in-completion"]},
		},
		"approved result": {
			"in": approved(result(request("main_test_sampler", {}), "AKIAIOSFODNN7EXAMPLE")),
			"want": {"outcome": "permit", "deny": [], "review": ["secret-in-completion"]},
		},
	}
	summary(decide(tc.in)) == tc.want
}

test_reasons_carry_messages if {
	d := decide(request("main_test_sampler", {"max_tokens": 2000}))
	d.review == [{"code": "long", "message": "maxTokens 2000 is over this server's 1000"}]
}

test_configured_default_deny if {
	d := mcpxfw.decision with input as request("quiet", {})
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "deny", "servers": {"quiet": {}}}
	d == {
		"outcome": "deny",
		"deny": [{"code": "default-outcome", "message": "no rule decided; the configured default is deny"}],
		"review": [],
		"waived": [],
	}
}

test_configured_default_deny_survives_approval if {
	d := mcpxfw.decision with input as approved(request("quiet", {}))
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "deny", "servers": {"quiet": {}}}
	summary(d) == {"outcome": "deny", "deny": ["default-outcome"], "review": []}
}

test_configured_default_permit if {
	d := mcpxfw.decision with input as request("quiet", {})
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "permit", "servers": {"quiet": {}}}
	d == {"outcome": "permit", "deny": [], "review": [], "waived": []}
}

test_default_is_review_without_config if {
	d := mcpxfw.decision with input as request("quiet", {}) with data.mcpxfw.servers as {"quiet": {"deny": set()}}
	summary(d) == {"outcome": "review", "deny": [], "review": ["default-outcome"]}
}

test_permit_must_be_true if {
	d := mcpxfw.decision with input as request("quiet", {})
		with data.mcpxfw.servers as {"quiet": {"permit": "yes"}}
		with data.mcpxfw.config as config
	d.outcome == "review"
}

test_quoted_server_name if {
	d := mcpxfw.decision with input as request("main-test-quoted", {})
		with data.mcpxfw.servers as {"main-test-quoted": {"deny": {{"code": "x", "message": "y"}}}}
	summary(d) == {"outcome": "deny", "deny": ["x"], "review": []}
}

test_missing_approval_field_is_not_approval if {
	doc := json.remove(request("main_test_sampler", {"max_tokens": 2000}), ["approval"])
	decide(doc).outcome == "review"
}

test_global_review_rules_count if {
	d := mcpxfw.decision with input as request("main_test_sampler", {})
		with data.mcpxfw.config as config
		with data.mcpxfw.global.review as {{"code": "g", "message": "global review"}}
	summary(d) == {"outcome": "review", "deny": [], "review": ["g"]}
}

# A package counts once it defines deny, review or permit; one defining
# none of them decides nothing, so the fallback decides instead.
test_package_without_rules_uses_fallback if {
	d := mcpxfw.decision with input as request("quiet", {"has_tools": true})
		with data.mcpxfw.servers as {"quiet": {"helper": 1}}
		with data.mcpxfw.config as {"default": "permit", "servers": {"quiet": {}}}
	summary(d) == {"outcome": "review", "deny": [], "review": ["tools-offered"]}
}

test_package_with_review_rules_only if {
	d := mcpxfw.decision with input as request("quiet", {"has_tools": true})
		with data.mcpxfw.servers as {"quiet": {"review": set()}}
		with data.mcpxfw.config as {"default": "permit", "servers": {"quiet": {}}}
	summary(d) == {"outcome": "permit", "deny": [], "review": []}
}

test_fallback_deny_rules_count if {
	d := mcpxfw.decision with input as request("stranger", {})
		with data.mcpxfw["default"].deny as {{"code": "closed", "message": "no strangers"}}
		with data.mcpxfw.config as config
	summary(d) == {"outcome": "deny", "deny": ["closed"], "review": ["unknown-server"]}
}

# with_approved_codes is doc at the result stage after a person approved
# codes at the request stage.
with_approved_codes(doc, codes) := object.union(doc, {"approved_codes": codes})

# An operator's rule that does not test the stage fires at both.
stageless_review := {{"code": "g", "message": "held at every stage"}}

test_approved_codes[note] if {
	some note, tc in {
		"an approved code is satisfied at the result stage": {
			"in": with_approved_codes(result(request("main_test_sampler", {}), "General Kenobi"), ["g"]),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"without approved codes the stageless rule holds the result again": {
			"in": result(request("main_test_sampler", {}), "General Kenobi"),
			"want": {"outcome": "review", "deny": [], "review": ["g"]},
		},
		"a new code still holds; only it is listed": {
			"in": with_approved_codes(result(request("main_test_sampler", {}), "AKIAIOSFODNN7EXAMPLE"), ["g"]),
			"want": {"outcome": "review", "deny": [], "review": ["secret-in-completion"]},
		},
		"an approved code never satisfies a deny": {
			"in": with_approved_codes(result(request("main_test_sampler", {"include_context": "thisServer"}), "hi"), ["g", "include-context"]),
			"want": {"outcome": "deny", "deny": ["include-context"], "review": []},
		},
	}
	d := mcpxfw.decision with input as tc.in
		with data.mcpxfw.config as config
		with data.mcpxfw.global.review as stageless_review
	summary(d) == tc.want
}

# A request held only by the configured default and approved is not held
# by the default again when its answer comes back.
test_approved_default_satisfied if {
	doc := with_approved_codes(result(request("quiet", {}), "hi"), ["default-outcome"])
	d := mcpxfw.decision with input as doc
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "review", "servers": {"quiet": {}}}
	d == {"outcome": "permit", "deny": [], "review": [], "waived": []}
}

test_unapproved_default_still_holds if {
	doc := with_approved_codes(result(request("quiet", {}), "hi"), ["g"])
	d := mcpxfw.decision with input as doc
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "review", "servers": {"quiet": {}}}
	summary(d) == {"outcome": "review", "deny": [], "review": ["default-outcome"]}
}

# A default of deny is a deny, whatever was approved.
test_approved_default_deny_still_denies if {
	doc := with_approved_codes(result(request("quiet", {}), "hi"), ["default-outcome"])
	d := mcpxfw.decision with input as doc
		with data.mcpxfw.servers as {"quiet": {"deny": set()}}
		with data.mcpxfw.config as {"default": "deny", "servers": {"quiet": {}}}
	summary(d) == {"outcome": "deny", "deny": ["default-outcome"], "review": []}
}

# elicitation is a form (or, with url set, a URL request) from server at
# the request stage, changed by facts.
elicitation(server, facts) := object.union(request(server, {}), {
	"kind": "elicitation",
	"request": {"mode": "form", "message": "Tell us more", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
	"facts": object.union(
		{
			"mode": "form", "message_bytes": 12, "field_names": ["name"], "folded_field_names": [],
			"fields": [{
				"name": "name", "type": "string", "format": "", "title": "", "description": "",
				"required": false, "has_default": false, "enum_count": 0, "multi": false,
			}],
			"texts": ["Tell us more"], "folded_texts": [], "hidden_text": "", "secret_stems": [], "url": null,
			"answer_texts": [], "answer_folded_texts": [], "answer_hidden_text": "", "answer_secret_stems": [],
		},
		facts,
	),
})

https_url := {
	"scheme": "https", "host": "example.com", "port": null, "userinfo": false,
	"registrable_domain": "example.com", "punycode": false, "mixed_script": false, "unicode_host": "example.com",
}

roots_list(server, uris) := object.union(request(server, {}), {
	"kind": "roots",
	"stage": "result",
	"request": {},
	"result": {"roots": [{"uri": u} | some u in uris]},
	"facts": {"root_count": count(uris), "root_uris": uris},
})

test_other_kinds[note] if {
	some note, tc in {
		"a form permitted": {
			"in": elicitation("main_test_sampler", {}),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"a form asking for a password denied": {
			"in": elicitation("main_test_sampler", {"field_names": ["password"]}),
			"want": {"outcome": "deny", "deny": ["form-asks-secret"], "review": []},
		},
		"a URL outside allowed_hosts held": {
			"in": elicitation("main_test_sampler", {"mode": "url", "url": https_url}),
			"want": {"outcome": "review", "deny": [], "review": ["url-host-not-allowed"]},
		},
		"an elicitation from a stranger held": {
			"in": elicitation("stranger", {}),
			"want": {"outcome": "review", "deny": [], "review": ["unknown-server"]},
		},
		"an answer with a key held": {
			"in": object.union(elicitation("main_test_sampler", {"answer_texts": ["AKIAIOSFODNN7EXAMPLE"]}), {"stage": "result", "result": {"action": "accept", "content": {"name": "AKIAIOSFODNN7EXAMPLE"}}}),
			"want": {"outcome": "review", "deny": [], "review": ["secret-in-answer"]},
		},
		"a roots list passes": {
			"in": roots_list("notes", ["file:///repo"]),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
		"a stranger's roots list held": {
			"in": roots_list("stranger", ["file:///repo"]),
			"want": {"outcome": "review", "deny": [], "review": ["unknown-server"]},
		},
		"a stranger's roots list approved at the request stage passes": {
			"in": object.union(roots_list("stranger", ["file:///repo"]), {"approved_codes": ["unknown-server"]}),
			"want": {"outcome": "permit", "deny": [], "review": []},
		},
	}
	summary(decide(tc.in)) == tc.want
}

# open is a server package that permits everything, as a careless or
# hostile first policy would.
open_server := {"open": {"permit": true}}

open_config := {"default": "review", "servers": {"open": {}}}

# A package permitting everything still gets the baseline and the global
# rules: a completion holding a key and a form asking for a password.
test_permit_everything_keeps_the_baseline[note] if {
	some note, tc in {
		"a completion holding an AWS key held": {
			"in": result(request("open", {}), "AKIAIOSFODNN7EXAMPLE"),
			"want": {"outcome": "review", "deny": [], "review": ["secret-in-completion"]},
		},
		"a prompt asking for a password held": {
			"in": request("open", {"texts": ["what is your password"]}),
			"want": {"outcome": "review", "deny": [], "review": ["asks-for-secrets"]},
		},
		"a form asking for a password denied": {
			"in": elicitation("open", {"field_names": ["password"]}),
			"want": {"outcome": "deny", "deny": ["form-asks-secret"], "review": []},
		},
	}
	d := mcpxfw.decision with input as tc.in
		with data.mcpxfw.servers as open_server
		with data.mcpxfw.config as open_config
	summary(d) == tc.want
	d.waived == []
}

# A waiver relaxes the one baseline code it names, and the decision lists
# the reason it relaxed; the other baseline code still holds.
test_waiver_is_named_and_shown if {
	servers := {"open": {"permit": true, "waive": {"asks-for-secrets"}}}
	asks := mcpxfw.decision with input as request("open", {"texts": ["what is your password"]})
		with data.mcpxfw.servers as servers
		with data.mcpxfw.config as open_config
	asks == {"outcome": "permit", "deny": [], "review": [], "waived": [{
		"code": "asks-for-secrets",
		"message": "the prompt mentions secrets, keys or credentials",
	}]}
	key := mcpxfw.decision with input as result(request("open", {}), "AKIAIOSFODNN7EXAMPLE")
		with data.mcpxfw.servers as servers
		with data.mcpxfw.config as open_config
	summary(key) == {"outcome": "review", "deny": [], "review": ["secret-in-completion"]}
}

# A waiver never reaches the global rules: a form asking for a password is
# refused whatever the package waives.
test_waiver_cannot_relax_global_rules if {
	d := mcpxfw.decision with input as elicitation("open", {"field_names": ["password"]})
		with data.mcpxfw.servers as {"open": {"permit": true, "waive": {"form-asks-secret"}}}
		with data.mcpxfw.config as open_config
	summary(d) == {"outcome": "deny", "deny": ["form-asks-secret"], "review": []}
	d.waived == []
}

# A baseline deny counts for every server, and is waived as a review is.
test_baseline_deny_rules_count if {
	rule := {{"code": "b", "message": "baseline deny"}}
	d := mcpxfw.decision with input as request("open", {})
		with data.mcpxfw.servers as open_server
		with data.mcpxfw.config as open_config
		with data.mcpxfw.baseline.deny as rule
	summary(d) == {"outcome": "deny", "deny": ["b"], "review": []}
	waived := mcpxfw.decision with input as request("open", {})
		with data.mcpxfw.servers as {"open": {"permit": true, "waive": {"b"}}}
		with data.mcpxfw.config as open_config
		with data.mcpxfw.baseline.deny as rule
	waived == {"outcome": "permit", "deny": [], "review": [], "waived": [{"code": "b", "message": "baseline deny"}]}
}
