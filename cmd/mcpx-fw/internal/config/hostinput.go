package config

import (
	"fmt"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// hostInput is a value a host asks its user for as it starts a server
// (VS Code's and Cursor's ${input:id}): serve has no host to ask, and the
// text would go to the server as it is.
var hostInput = regexp.MustCompile(`\$\{input:([^}]*)\}`)

// schemeOnly is what may stand beside the references of a value shown in
// the line to write: an auth scheme word (Bearer, Basic) or nothing. Any
// other text may be a secret and is not shown.
var schemeOnly = regexp.MustCompile(`^(?:[A-Za-z]+ )?$`)

// verifyHostInputs refuses each value under key (a server's headers or
// env) that holds ${input:id}, naming the line to write instead: each
// reference made a ${VAR} of serve's environment.
func (c *Config) verifyHostInputs(bad func(string, string, ...any), key string, values map[string]string) {
	for name, value := range values {
		refs := hostInput.FindAllStringSubmatch(value, -1)
		if refs == nil {
			continue
		}
		var vars []string
		written := hostInput.ReplaceAllStringFunc(value, func(ref string) string {
			vars = append(vars, hostconfig.InputVar(hostInput.FindStringSubmatch(ref)[1]))
			return "${" + vars[len(vars)-1] + "}"
		})
		section := key[strings.LastIndex(key, ".")+1:]
		write := fmt.Sprintf("%s: {%s: %q}", section, writtenName(c.doc, key, name), written)
		if !schemeOnly.MatchString(hostInput.ReplaceAllString(value, "")) {
			write = fmt.Sprintf("${%s} in place of %s", vars[0], refs[0][0])
		}
		bad(key+"."+name, "asks the host for a value (%s), which serve cannot: write %s and set %s in serve's environment",
			refs[0][0], write, strings.Join(vars, ", "))
	}
}

// writtenName is name, a member of the mapping at key, as the file writes
// it: the config's maps hold their names in lower case.
func writtenName(doc *yaml.Node, key, name string) string {
	node := doc
	for _, part := range keyParts(key) {
		if node, _ = child(node, part); node == nil {
			return name
		}
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if strings.EqualFold(node.Content[i].Value, name) {
			return node.Content[i].Value
		}
	}
	return name
}
