package mcpxfw

decision := {"outcome": "permit", "deny": [], "review": [] if {
