// Package policies carries the shipped Rego policies, embedded so that
// `mcpx-fw demo` runs with nothing installed. The .rego files are the
// product; this file only embeds them.
package policies

import "embed"

// FS holds every file of this folder but this one.
//
//go:embed *
var FS embed.FS
