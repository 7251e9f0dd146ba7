package config

import (
	"errors"
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
				errs = append(errs, &KeyError{Key: prefix + name, Problem: ref + " is not set in the environment"})
			}
			return val
		})
	}
	return out, errors.Join(errs...)
}

// KeyError is a problem with the value of one key (servers.NAME.env.X),
// found once the config is loaded: Config.Placed puts it at the line of
// the file that writes the key.
type KeyError struct {
	Key     string
	Problem string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Problem }

// Placed is err, one error or several joined, as Load words its
// problems: each at FILE:LINE of the key a KeyError names, in the file's
// order, any other after "config FILE:".
func (c *Config) Placed(err error) error {
	if err == nil {
		return nil
	}
	p := &problems{file: c.path, doc: c.doc}
	for _, e := range unjoined(err) {
		if ke, ok := e.(*KeyError); ok && lineOf(c.doc, ke.Key) > 0 {
			p.at(lineOf(c.doc, ke.Key), "%s", ke.Error())
		} else {
			p.list = append(p.list, problem{0, "config " + c.DisplayPath() + ": " + e.Error()})
		}
	}
	return p.err()
}

// unjoined is each error errors.Join joined into err, at any depth.
func unjoined(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, unjoined(e)...)
	}
	return out
}
