package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// capabilitiesFile is the capabilities document shipped at the root of a
// policy directory, so `opa check --capabilities policies/capabilities.json`
// and `opa test --capabilities ...` see the same builtins mcpx-fw allows.
const capabilitiesFile = "capabilities.json"

// networkBuiltins are the builtins a policy could use to reach outside the
// process: the network (http.send, net.lookup_ip_addr) or the runtime's
// environment and configuration, which may hold secrets (opa.runtime). A
// sampling decision must depend only on its input and data.
var networkBuiltins = []string{"http.send", "net.lookup_ip_addr", "opa.runtime"}

// policyCapabilities returns the builtins a policy in src may use: its
// capabilities.json when present (operators may narrow it further), else
// this OPA version's. The network builtins are removed in either case, so
// no file can widen the sandbox.
func policyCapabilities(src policySource) (*ast.Capabilities, error) {
	b, path, err := src.readFile(capabilitiesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return sandboxCapabilities(ast.CapabilitiesForThisVersion()), nil
	}
	if err != nil {
		return nil, fmt.Errorf("policy capabilities %s: %w", path, err)
	}
	caps, err := ast.LoadCapabilitiesJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("policy capabilities %s: %w", path, err)
	}
	return sandboxCapabilities(caps), nil
}

// sandboxCapabilities removes the network builtins from caps and allows no
// host, in case a later OPA adds a builtin that honours allow_net.
func sandboxCapabilities(caps *ast.Capabilities) *ast.Capabilities {
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return slices.Contains(networkBuiltins, b.Name)
	})
	caps.AllowNet = []string{}
	return caps
}
