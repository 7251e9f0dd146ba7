package pipeline

import "testing"

// TestUnescapeHTML: only encoding/json's HTML escapes are undone.
func TestUnescapeHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"t":"\u003cb\u003e \u0026"}`, `{"t":"<b> &"}`},
		{`{"t":"\\u003c"}`, `{"t":"\\u003c"}`},
		{`{"t":"\\\u003c"}`, `{"t":"\\<"}`},
		{`{"t":"\u00e9"}`, `{"t":"\u00e9"}`},
		{`{"t":"plain"}`, `{"t":"plain"}`},
		{`"\u003`, `"\u003`},
	} {
		if got := string(unescapeHTML([]byte(tc.in))); got != tc.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
