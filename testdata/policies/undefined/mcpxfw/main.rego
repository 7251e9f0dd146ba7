# The decision is defined only for an input no request has, so the query is
# undefined: mcpx-fw must report an error, not deny and not permit.
package mcpxfw

decision := {"outcome": "permit", "deny": [], "review": []} if input.never_set
