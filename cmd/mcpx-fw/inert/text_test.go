package inert

import "testing"

// TestFolded: OPA's compile error, a quoted source line and a caret under
// it, shows on one line; a line break an upstream hid in it stays escaped.
func TestFolded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 error occurred: p.rego:3: rego_parse_error: unexpected }\n\tallow if }\n\t         ^", "1 error occurred: p.rego:3: rego_parse_error: unexpected }; allow if }; ^"},
		{"one line", "one line"},
		{"a\r\nb\x1b[2J", `a ; b\x1b[2J`},
	} {
		if got := Folded(tc.in); got != tc.want {
			t.Errorf("Folded(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
