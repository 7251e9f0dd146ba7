package mcpxfw_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShippedBinaryLinksNoTestPeer: the mcpx-fw that ships links no test
// peer (relay/peer: tools that send raw bytes, flood, and try every route
// to decide their own review and read serve's secrets), however it would
// come to: the import rules catch a direct import, this the whole graph
// the go tool builds. The demo's own peers are linked instead.
func TestShippedBinaryLinksNoTestPeer(t *testing.T) {
	module := modulePath(t, "go.mod")
	out, err := exec.Command("go", "list", "-deps", "./cmd/mcpx-fw").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/mcpx-fw: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	var demo bool
	for _, p := range deps {
		if hasPathPrefix(p, module+"/relay/peer") {
			t.Errorf("mcpx-fw links %s", p)
		}
		demo = demo || p == module+"/relay/demopeer"
	}
	if !demo {
		t.Errorf("mcpx-fw does not link relay/demopeer; is `go list` listing this module? got %q", deps)
	}
}
