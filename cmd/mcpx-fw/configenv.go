package main

import (
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// keepEnvCase puts back the case of each server's env names, which viper
// folds to lower case with every other key: `env: {API_KEY: x}` must reach
// the upstream as API_KEY, since environment names are case-sensitive.
func (c *Config) keepEnvCase() error {
	if c.path == "" {
		return nil
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var raw struct {
		Servers map[string]struct {
			Env map[string]string `yaml:"env"`
		} `yaml:"servers"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config %s: %w", c.path, err)
	}
	for name, s := range raw.Servers {
		server, ok := c.Servers[strings.ToLower(name)]
		if !ok || len(s.Env) == 0 {
			continue
		}
		server.Env = s.Env
		c.Servers[strings.ToLower(name)] = server
	}
	return nil
}
