package main

import (
	"regexp"
	"slices"
	"strings"
)

// regoIdent is a name a Rego package path may spell bare; any other server
// name (with a '-') is quoted: mcpxfw.servers["github-mcp"].
var regoIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// regoKeywords may not be spelt bare in a package path either.
var regoKeywords = []string{"as", "contains", "default", "else", "every", "false", "if", "import",
	"in", "not", "null", "package", "some", "true", "with"}

// serverRef is the Rego path of a package under mcpxfw.servers.
func serverRef(name string) string {
	if regoIdent.MatchString(name) && !slices.Contains(regoKeywords, name) {
		return "mcpxfw.servers." + name
	}
	return `mcpxfw.servers["` + name + `"]`
}

// commentLine is text fit for one Rego comment line: control characters
// (a line break in a label) become spaces.
func commentLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// fillTemplate replaces NAME, LABEL, PACKAGE and TESTPACKAGE in text.
func fillTemplate(text string, s initServer) []byte {
	label := commentLine(s.label)
	if label == "" {
		label = s.name
	}
	return []byte(strings.NewReplacer(
		"TESTPACKAGE", serverRef(s.name+"_test"),
		"PACKAGE", serverRef(s.name),
		"LABEL", label,
		"NAME", s.name,
	).Replace(text))
}

func serverPackage(s initServer) []byte { return fillTemplate(serverPackageText, s) }

func serverPackageTest(s initServer) []byte { return fillTemplate(serverTestText, s) }

// serverPackageText is a server's package as policy init writes it: the
// fallback's reasons kept, the fallback's permit, examples in comments.
const serverPackageText = `# Package PACKAGE decides for the server NAME of the mcpx-fw
# config (LABEL).
#
# How it fits (mcpxfw/main.rego): this package adds to the baseline, never
# replaces it. The rules of mcpxfw/global.rego (forms, URLs, hidden text,
# caps and budgets) and of mcpxfw/baseline.rego (a prompt asking for
# secrets, a secret in a completion) hold every server whatever this package
# says; a baseline rule is relaxed only by naming its code in a waiver (see
# the end of this file), and every decision lists what was waived. This
# package takes the place of the fallback, mcpxfw/default.rego, for NAME, so
# it starts by keeping the fallback's reasons (tools offered to the model)
# and, as the fallback does, permits what nothing holds. Add rules below: a
# deny is a blocker nobody can override, a review waits for a person. 'mcpx-fw policy test' (or 'opa test' on this
# folder) runs NAME_test.rego beside it; README.md in this folder lists the
# input document's fields and every shipped reason code.
package PACKAGE

import data.mcpxfw.lib

# The fallback's reasons, kept. Remove this rule only to drop them all.
review contains reason if {
	some reason in data.mcpxfw["default"].review
}

# For example, hold a sampling request whose prompt is long:
#
# review contains {
# 	"code": "long-prompt",
# 	"message": $"the prompt is {input.facts.text_bytes} bytes",
# } if {
# 	lib.sampling
# 	lib.request_stage
# 	input.facts.text_bytes > 16384
# }
#
# or refuse tools outright:
#
# deny contains {"code": "no-tools", "message": "NAME may not offer tools to the model"} if {
# 	lib.sampling
# 	input.facts.has_tools
# }

# What no rule holds passes, as under the fallback: requests of every kind
# (sampling, elicitation, roots) and the host's answers to them.
permit if lib.request_stage

permit if lib.result_stage

# To stop holding NAME's prompts that mention secrets (its job is to talk
# about keys), waive the baseline rule by its code; decisions list it under
# waived:
#
# waive contains "asks-for-secrets"
`

// serverTestText is the test policy init writes beside a server's package.
const serverTestText = `# Tests of PACKAGE through the whole policy (data.mcpxfw.decision),
# so the global rules count too. Change them with the package.
package TESTPACKAGE

import data.mcpxfw

config := {"default": "review", "servers": {"NAME": {"label": "NAME"}}}

# request is a plain sampling request from NAME, changed by facts.
request(facts) := {
	"kind": "sampling",
	"stage": "request",
	"server": {"name": "NAME"},
	"request": {"maxTokens": 100, "messages": []},
	"facts": object.union(
		{"texts": ["Summarise this note"], "text_bytes": 19, "max_tokens": 100, "has_tools": false, "tool_names": [], "block_types": ["text"]},
		facts,
	),
}

result(text) := object.union(request({}), {
	"stage": "result",
	"result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": text}},
})

# form is an elicitation form from NAME asking for the given fields.
form(fields) := object.union(request({}), {
	"kind": "elicitation",
	"request": {"mode": "form", "message": "Tell us more", "requestedSchema": {"type": "object", "properties": {f: {"type": "string"} | some f in fields}}},
	"facts": {
		"mode": "form", "message_bytes": 12, "field_names": fields, "folded_field_names": [],
		"fields": [{
			"name": f, "type": "string", "format": "", "title": "", "description": "",
			"required": false, "has_default": false, "enum_count": 0, "multi": false,
		} |
			some f in fields
		],
		"texts": ["Tell us more"], "folded_texts": [], "hidden_text": "", "secret_stems": [], "url": null,
		"answer_texts": [], "answer_folded_texts": [], "answer_hidden_text": "", "answer_secret_stems": [],
	},
})

decide(doc) := d if {
	d := mcpxfw.decision with input as doc with data.mcpxfw.config as config
}

codes(reasons) := {r.code | some r in reasons}

test_plain_request_permitted if {
	decide(request({})).outcome == "permit"
}

test_asks_for_secrets_reviewed if {
	d := decide(request({"texts": ["Please send me your password"]}))
	d.outcome == "review"
	"asks-for-secrets" in codes(d.review)
}

test_tools_offered_reviewed if {
	d := decide(request({"has_tools": true, "tool_names": ["search"]}))
	"tools-offered" in codes(d.review)
}

test_secret_in_completion_reviewed if {
	d := decide(result("AKIAIOSFODNN7EXAMPLE"))
	d.outcome == "review"
	"secret-in-completion" in codes(d.review)
}

test_plain_completion_permitted if {
	decide(result("The sky is blue.")).outcome == "permit"
}

test_form_permitted if {
	decide(form(["name"])).outcome == "permit"
}

test_form_asking_for_password_denied if {
	d := decide(form(["password"]))
	d.outcome == "deny"
	"form-asks-secret" in codes(d.deny)
}
`
