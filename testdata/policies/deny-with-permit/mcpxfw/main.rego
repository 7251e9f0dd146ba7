# A composition bug says permit while listing a deny reason; Go must still
# make it a blocker.
package mcpxfw

decision := {
	"outcome": "permit",
	"deny": [{"code": "no-tools", "message": "tools are not allowed"}],
	"review": [],
}
