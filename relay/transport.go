package relay

import (
	"os"
	"os/exec"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamTransport reaches cfg's server.
func upstreamTransport(cfg Upstream) mcp.Transport {
	return &mcp.CommandTransport{Command: command(cfg)}
}

func command(cfg Upstream) *exec.Cmd {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Stderr = os.Stderr // the upstream's own logs join ours on stderr
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
	}
	return cmd
}
