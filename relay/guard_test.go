package relay

import "testing"

// TestMayNeedInput: the pre-check lets no spelling of input_required past.
func TestMayNeedInput(t *testing.T) {
	for _, tc := range []struct {
		result string
		want   bool
	}{
		{`{"resultType":"input_required","inputRequests":{}}`, true},
		{`{"resultType":"input\u005frequired","inputRequests":{}}`, true},
		{`{"resultType":"\u0069nput_required"}`, true},
		{`{"content":[{"type":"text","text":"done"}]}`, false},
	} {
		if got := mayNeedInput([]byte(tc.result)); got != tc.want {
			t.Errorf("mayNeedInput(%s) = %v, want %v", tc.result, got, tc.want)
		}
	}
}
