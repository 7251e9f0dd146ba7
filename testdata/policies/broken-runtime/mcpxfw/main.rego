# This policy compiles but fails at evaluation for every input: two complete
# definitions of outcome give different values (eval_conflict_error). A
# broken policy must give an error, never a pass.
package mcpxfw

decision := {"outcome": outcome, "deny": [], "review": []}

outcome := "permit" if input

outcome := "review" if input
