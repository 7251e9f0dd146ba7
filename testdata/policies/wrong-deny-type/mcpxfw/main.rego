# deny holds bare strings instead of {code, message} reasons.
package mcpxfw

decision := {"outcome": "deny", "deny": ["no-tools"], "review": []}
