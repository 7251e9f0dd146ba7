// Package config is mcpx-fw's configuration: every key of the config file
// as a typed field, each key's default, the MCPXFW_* environment overlay,
// the checks that name every bad key at once, and loading through viper
// (Load). A key is declared once: here, or as the mapstructure tag of the
// relay's or validate's own settings type a section holds (relay.HTTPOptions,
// relay.ElicitationConfig, relay.RootsConfig, validate.Limits).
// config.example.yaml documents each key with its default, and a test
// holds the two together.
//
// It reads the config file and the environment (and looks a server's
// command up on PATH when it is written with a space), and nothing else: it opens
// no store, starts no upstream, builds no logger and keeps no state past
// Load. It imports the relay, the engine and validate only for their
// defaults, their words (revisions, loopback hosts) and the settings types
// the config hands them; the commands of cmd/mcpx-fw turn a *Config into
// running parts.
package config
