# Package mcpxfw composes the decision mcpx-fw enforces. It is the only query
# mcpx-fw evaluates, so `opa eval -d policies -i input.json
# data.mcpxfw.decision` shows exactly what the firewall will do.
#
# Reasons come from data.mcpxfw.global (every server), from
# data.mcpxfw.baseline (every server, less the codes the server's package
# waives) and from the server's own package data.mcpxfw.servers[name], or
# data.mcpxfw.default when the server has none. Any deny wins, and so does a configured default of deny
# when no rule decided; then any review still holding the item (one whose
# code a person approved at the request stage no longer does), unless a
# person already approved; then an approval, approved codes covering every
# review, or the package's permit; then the configured default.
package mcpxfw

# decision is the whole answer: an outcome word and the sorted reasons
# behind it (under review, only those still holding the item). mcpx-fw
# treats anything else as "the policy could not decide".
decision := {
	"outcome": outcome,
	"deny": listed("deny"),
	"review": listed("review"),
	"waived": sort(waived_reasons),
}

outcome := "deny" if {
	count(deny_reasons) > 0
} else := "deny" if {
	undecided
	configured_default == "deny"
} else := "review" if {
	count(held_reasons) > 0
	not approved
} else := "permit" if {
	approved
} else := "permit" if {
	satisfied
} else := "permit" if {
	package_permits
} else := configured_default

# own_package is true when the server has a package of its own, that is one
# defining deny, review or permit. Asking for those rules, rather than for
# the package as a whole, evaluates only what the decision needs.
own_package if data.mcpxfw.servers[input.server.name].deny

own_package if data.mcpxfw.servers[input.server.name].review

own_package if data.mcpxfw.servers[input.server.name].permit

# reasons gathers both kinds for listed: the denies, and the reviews still
# holding the item.
reasons := {"deny": deny_reasons, "review": held_reasons}

deny_reasons contains r if some r in data.mcpxfw.global.deny

deny_reasons contains r if some r in data.mcpxfw.servers[input.server.name].deny

deny_reasons contains r if {
	some r in data.mcpxfw.baseline.deny
	not r.code in waivers
}

deny_reasons contains r if {
	not own_package
	some r in data.mcpxfw["default"].deny
}

review_reasons contains r if some r in data.mcpxfw.global.review

review_reasons contains r if some r in data.mcpxfw.servers[input.server.name].review

review_reasons contains r if {
	some r in data.mcpxfw.baseline.review
	not r.code in waivers
}

review_reasons contains r if {
	not own_package
	some r in data.mcpxfw["default"].review
}

# waivers are the baseline codes the server's own package relaxes by name
# (waive contains "asks-for-secrets"). Only a string names a code.
waivers contains code if {
	some code in data.mcpxfw.servers[input.server.name].waive
	is_string(code)
}

# waived_reasons are the baseline reasons that would have held or refused
# this item but for a waiver, so the decision shows what was relaxed.
waived_reasons contains r if {
	some kind in ["deny", "review"]
	some r in data.mcpxfw.baseline[kind]
	r.code in waivers
}

# approved_codes are the reason codes a person approved for this item at the
# request stage; mcpx-fw sets them at the result stage. An approval covers
# the reasons the person saw: a review reason with one of these codes is
# satisfied, so an approved request is not held again for the same reason
# when its answer comes back; a new code still holds it.
approved_codes := {code | some code in input.approved_codes}

# held_reasons are the review reasons no approved code satisfies.
held_reasons contains r if {
	some r in review_reasons
	not r.code in approved_codes
}

# satisfied is true when every reason to hold the item was approved at the
# request stage: the review reasons, or the configured default of review.
satisfied if {
	count(review_reasons) > 0
	count(held_reasons) == 0
}

satisfied if default_approved("review")

# default_approved(kind) is true when the configured default decides, as
# kind, and a person approved it at the request stage. Only a review can
# be approved; a default of deny is a deny.
default_approved(kind) if {
	kind == "review"
	undecided
	configured_default == kind
	"default-outcome" in approved_codes
}

# package_permits is true when the deciding package says permit, exactly.
package_permits if data.mcpxfw.servers[input.server.name].permit == true

package_permits if {
	not own_package
	data.mcpxfw["default"].permit == true
}

# approved is true once a person approved this request; their approval
# satisfies review reasons but never a deny.
approved if is_object(input.approval)

# configured_default applies when no rule decided; mcpx-fw's configuration
# sets it, and without one nothing passes unseen.
default configured_default := "review"

configured_default := data.mcpxfw.config.default

# undecided is true when no rule decided, so the configured default does.
# An approval satisfies a default of review, as it satisfies any review; a
# default of deny is a deny, which nobody can approve away.
undecided if {
	count(deny_reasons) == 0
	count(review_reasons) == 0
	not package_permits
}

# listed gives the sorted reasons of one kind, naming the configured default
# when it decided, so a reviewer always sees why a request was held.
listed(kind) := sort(reasons[kind] | {default_reason}) if {
	undecided
	configured_default == kind
	not default_approved(kind)
} else := sort(reasons[kind])

default_reason := {
	"code": "default-outcome",
	"message": $"no rule decided; the configured default is {configured_default}",
}
