package validate

import "testing"

// TestElicitationModeInfers: without a mode, an elicitationId alone
// makes the request url mode for the SDK and validate; show must lay it
// out as the host will read it, not as a form.
func TestElicitationModeInfers(t *testing.T) {
	for _, tc := range []struct {
		req  map[string]any
		want string
	}{
		{map[string]any{"message": "m"}, "form"},
		{map[string]any{"url": "https://example.com/"}, "url"},
		{map[string]any{"elicitationId": "e1"}, "url"},
		{map[string]any{"mode": "", "elicitationId": "e1"}, "url"},
		{map[string]any{"mode": "form", "elicitationId": "e1"}, "form"},
	} {
		if got := ElicitationMode(tc.req); got != tc.want {
			t.Errorf("ElicitationMode(%v) = %q; want %q", tc.req, got, tc.want)
		}
	}
}
