package config

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DefaultMaxTokens is a server's max_tokens when its entry does not set the
// key: a request asking for more is denied. A cap is the safe default, since
// maxTokens is what an upstream spends of the user's model; 0 (set
// explicitly) means no cap.
const DefaultMaxTokens = 4096

// rawServer is what viper loses of a server entry: the case of env names
// and whether a key was written at all.
type rawServer struct {
	Env       map[string]string `yaml:"env"`
	MaxTokens *int              `yaml:"max_tokens"`
	Sampling  *bool             `yaml:"sampling"`
	// Elicitation and Roots only tell whether enabled was written.
	Elicitation struct {
		Enabled *bool `yaml:"enabled"`
	} `yaml:"elicitation"`
	Roots struct {
		Enabled *bool `yaml:"enabled"`
	} `yaml:"roots"`
}

// applyRawServers puts back, for each server, what viper's decoding loses
// (see keepEnvCase, defaultServerMaxTokens and defaultServerOffers). Servers come only from the
// file, never from the environment, so the file (doc) is the whole truth.
func (c *Config) applyRawServers(doc *yaml.Node) {
	for name, s := range rawServers(doc) {
		server, ok := c.Servers[strings.ToLower(name)]
		if !ok {
			continue
		}
		keepEnvCase(&server, s)
		defaultServerMaxTokens(&server, s)
		defaultServerOffers(&server, s)
		c.Servers[strings.ToLower(name)] = server
	}
}

// rawServers reads the servers of the file. A value of the wrong type is
// left out (checkFile names it), the rest is read.
func rawServers(doc *yaml.Node) map[string]rawServer {
	var raw struct {
		Servers map[string]rawServer `yaml:"servers"`
	}
	if doc != nil {
		_ = doc.Decode(&raw) // a *yaml.TypeError still fills in the rest
	}
	return raw.Servers
}

// keepEnvCase puts back the case of a server's env names, which viper
// folds to lower case with every other key: `env: {API_KEY: x}` must reach
// the upstream as API_KEY, since environment names are case-sensitive.
func keepEnvCase(server *Server, raw rawServer) {
	if len(raw.Env) > 0 {
		server.Env = raw.Env
	}
}

// defaultServerMaxTokens gives a server whose entry does not mention
// max_tokens the default cap; decoding alone cannot tell an absent key
// from an explicit 0 (no cap).
func defaultServerMaxTokens(server *Server, raw rawServer) {
	if raw.MaxTokens == nil {
		server.MaxTokens = DefaultMaxTokens
	}
}

// defaultServerOffers turns on, for a server whose entry does not mention
// them, sampling, elicitation.enabled and roots.enabled: what the host
// declared is offered unless the operator says otherwise. Decoding alone
// cannot tell an absent key from an explicit false.
func defaultServerOffers(server *Server, raw rawServer) {
	if raw.Sampling == nil {
		server.Sampling = true
	}
	if raw.Elicitation.Enabled == nil {
		server.Elicitation.Enabled = true
	}
	if raw.Roots.Enabled == nil {
		server.Roots.Enabled = true
	}
}

// appendArgs puts each server's args after its command, as a host's
// config means them.
func (c *Config) appendArgs() {
	for name, s := range c.Servers {
		if len(s.Args) > 0 {
			s.Command, s.Args = append(slices.Clip(s.Command), s.Args...), nil
			c.Servers[name] = s
		}
	}
}
