package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/rawjson"
)

// Probed is what Probe learned of a server.
type Probed struct {
	// Tools is how many tools it listed.
	Tools int
	// Stderr is the last ProbeStderrCap bytes it wrote to stderr, as
	// written: the caller makes them inert before anyone sees them.
	Stderr []byte
}

// probeTerminate is how long Probe's close waits for a server to exit
// once its input closes before it is signalled: a probed server is
// asked nothing more, and many keep running until told (npm's
// server-everything does).
const probeTerminate = time.Second

// ProbeStderrCap is the most of a probed server's stderr kept: its end,
// where a failing program says why.
const ProbeStderrCap = 512

// Probe starts cfg's server once as serve starts it (its command with its
// own environment, through the sandbox when cfg.Isolated, with hide and
// readOnly; or its URL with its headers, redirects kept to its origin),
// initializes a session at the revision serve asks of it for a host of
// the newest (requestedEra), lists its tools, every page, and closes it. It
// is how `mcpx-fw check` proves a server starts; ctx bounds all of it.
// The session is offered nothing: a push it makes is refused.
func Probe(ctx context.Context, cfg Upstream, hide, readOnly []string, version string) (Probed, error) {
	var out Probed
	stderr := &tailBuffer{limit: ProbeStderrCap}
	t, cmd := probeTransport(cfg, hide, readOnly, stderr)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpx-fw", Version: version},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: requestedEra(cfg.Era, modernEra)})
	if err == nil {
		out.Tools, err = countTools(ctx, cs)
		err = errors.Join(err, closeProbe(cs))
	}
	out.Stderr = stderr.bytes()
	return out, exited(err, cmd)
}

// probeTransport is the transport Probe reaches cfg's server by, and the
// command it runs (nil for a URL server), whose stderr goes to stderr.
func probeTransport(cfg Upstream, hide, readOnly []string, stderr *tailBuffer) (mcp.Transport, *exec.Cmd) {
	if cfg.URL == "" {
		cmd := command(cfg, hide, readOnly)
		cmd.Stderr = stderr
		cmd.WaitDelay = stderrDrain // a process it left behind may hold stderr open
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: probeTerminate}, cmd
	}
	client := &http.Client{Transport: headerRoundTripper(cfg.URL, cfg.Headers), CheckRedirect: sameOriginRedirects(cfg.Name, cfg.URL)}
	return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: client, MaxEventSize: rawjson.MaxFrame}, nil
}

// countTools counts the tools cs lists; none when the server declared no
// tools.
func countTools(ctx context.Context, cs *mcp.ClientSession) (int, error) {
	if cs.InitializeResult().Capabilities == nil || cs.InitializeResult().Capabilities.Tools == nil {
		return 0, nil
	}
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return n, fmt.Errorf("tools/list: %w", err)
		}
		n++
	}
	return n, nil
}

// closeProbe ends the session; a server that exits when its input closes
// has done nothing wrong.
func closeProbe(cs *mcp.ClientSession) error {
	err := cs.Close()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		return nil
	}
	return err
}

// exited adds to err how cmd ended, when it has: a server that exits at
// once fails with no more than a closed connection otherwise.
func exited(err error, cmd *exec.Cmd) error {
	if err == nil || cmd == nil || cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		return err
	}
	return fmt.Errorf("its process ended (%s): %w", cmd.ProcessState, err)
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}
