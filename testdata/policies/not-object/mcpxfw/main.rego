# The decision is a bare word instead of an object.
package mcpxfw

decision := "permit"
