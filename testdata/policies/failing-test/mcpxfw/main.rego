# A policy whose tests include one that fails, to show RunPolicyTests
# reports failures as failures.
package mcpxfw

decision := {"outcome": "permit", "deny": [], "review": []}
