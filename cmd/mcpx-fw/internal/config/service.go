package config

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Credentials is the credentials: block of an operator's HTTP service that
// mcpx-fw calls (policy.bundle, decision_log.service), as OPA's services
// config has it: a bearer token, sent as "Authorization: Bearer <token>".
// ${VAR} in it is read from the environment, as in the service's headers.
type Credentials struct {
	Bearer struct {
		Token string `mapstructure:"token"`
	} `mapstructure:"bearer"`
}

// serviceOwnHeaders are the headers the clients of policy.bundle,
// decision_log.service and tracing.otlp set themselves: configured, they
// would break the upload or the download.
var serviceOwnHeaders = []string{"content-type", "content-encoding", "content-length", "host"}

// verifyServiceHeaders refuses header names that are not HTTP field names,
// and those the service's client sets itself. key is the headers' key,
// such as decision_log.service.headers.
func verifyServiceHeaders(bad func(string, string, ...any), key string, headers map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		switch {
		case !headerName.MatchString(name):
			bad(key, "%s", notHeaderName)
		case oneOf(strings.ToLower(name), serviceOwnHeaders...):
			bad(key, "%s is set by mcpx-fw itself and cannot be configured", name)
		}
	}
}

// ExpandService is a service's headers and bearer token with every ${VAR}
// read from the environment; prefix is the service's key, such as
// policy.bundle. Its errors name the key and the variable, never a value.
func ExpandService(prefix string, headers map[string]string, token string) (map[string]string, string, error) {
	h, herr := expandHeaderValues(prefix+".headers.", headers)
	t, terr := expandHeaderValues(prefix+".credentials.bearer.", map[string]string{"token": token})
	return h, t["token"], errors.Join(herr, terr)
}

// expandHeaderValues replaces every ${VAR} in the values with VAR from
// the environment; a value must not hold a line break once expanded (it
// would end the header). Errors name prefix+name.
func expandHeaderValues(prefix string, values map[string]string) (map[string]string, error) {
	out, err := expandVars(prefix, values)
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if strings.ContainsAny(out[name], "\r\n") {
			err = errors.Join(err, &KeyError{Key: prefix + name, Problem: "the value contains a line break"})
		}
	}
	return out, err
}
