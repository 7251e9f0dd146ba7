package config

// Console is where mcpx-fw console listens.
type Console struct {
	// Addr is host:port; port 0 picks a free one (the printed link names it).
	Addr string `mapstructure:"addr"`
	// AllowRemote lets Addr be other than a loopback address. The console
	// has no TLS: across a network its cookie and pages travel in clear.
	AllowRemote bool `mapstructure:"allow_remote"`
}

// defaultConsoleAddr is loopback only, on a free port.
const defaultConsoleAddr = "127.0.0.1:0"
