# "allow" is not one of deny, review, permit.
package mcpxfw

decision := {"outcome": "allow", "deny": [], "review": []}
