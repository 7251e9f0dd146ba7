package main

import "testing"

func TestGCSettingsYieldToTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		tuned bool
	}{
		{"neither set", nil, true},
		{"GOGC set", map[string]string{"GOGC": "100"}, false},
		{"GOGC off", map[string]string{"GOGC": "off"}, false},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, false},
		{"GOGC empty is still the operator's", map[string]string{"GOGC": ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			percent, limit, tuned := gcSettings(lookup)
			if tuned != tc.tuned {
				t.Fatalf("tuned = %v, want %v", tuned, tc.tuned)
			}
			if tuned && (percent != serveGCPercent || limit != serveMemoryLimit) {
				t.Errorf("settings = %d%%, %d bytes; want %d%%, %d bytes", percent, limit, serveGCPercent, serveMemoryLimit)
			}
			if !tuned && (percent != 0 || limit != 0) {
				t.Errorf("untuned settings = %d%%, %d bytes; want none", percent, limit)
			}
		})
	}
}
