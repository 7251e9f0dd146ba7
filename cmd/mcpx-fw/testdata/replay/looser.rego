# A looser candidate for the replay tests, added to a copy of the shipped
# policies: server peer gets a package of its own that waives the
# baseline's secret check and permits the rest, so a prompt the shipped
# policies held for a person passes.
package mcpxfw.servers.peer

waive contains "asks-for-secrets"

permit := true
