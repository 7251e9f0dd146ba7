package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
)

// configVar is a ${VAR} reference in a header or env value.
var configVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandHeaders replaces every ${VAR} in the header values with VAR from
// the environment; a value must not hold a line break once expanded.
func ExpandHeaders(server string, headers map[string]string) (map[string]string, error) {
	return expandHeaderValues("servers."+server+".headers.", headers)
}

// ExpandEnv replaces every ${VAR} in a command server's env values with VAR
// from the environment: the way to hand one server one of serve's secrets.
func ExpandEnv(server string, env map[string]string) (map[string]string, error) {
	return expandVars("servers."+server+".env.", env)
}

// expandVars replaces each ${VAR} in the values. Errors name the key and
// the variable, never a value: these are credentials.
func expandVars(prefix string, values map[string]string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(values)) {
		out[name] = configVar.ReplaceAllStringFunc(values[name], func(ref string) string {
			val, ok := os.LookupEnv(ref[2 : len(ref)-1])
			if !ok {
				errs = append(errs, fmt.Errorf("%s%s: %s is not set in the environment", prefix, name, ref))
			}
			return val
		})
	}
	return out, errors.Join(errs...)
}
