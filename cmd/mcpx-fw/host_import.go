package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// importedServer is a host's server as mcpx-fw's config writes it.
type importedServer struct {
	Command []string          `yaml:"command,omitempty,flow"`
	Env     map[string]string `yaml:"env,omitempty"`
	Dir     string            `yaml:"dir,omitempty"`
	URL     string            `yaml:"url,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
}

// importHost adds the host's servers that mcpx-fw's config lacks (by
// name, as the config folds it) and returns whether the config holds
// values copied from the host's file. Config has no file of secrets of its
// own, so those values are written into it and the file is made 0600: a
// key in a host's env stays out of every command line.
func importHost(w io.Writer, hf hostFile, cfg string, dry bool) (bool, error) {
	_, servers, err := hf.read()
	if err != nil {
		return false, err
	}
	old, err := os.ReadFile(cfg)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	doc, err := configDoc(cfg, old)
	if err != nil {
		return false, err
	}
	added, secret, err := addServers(doc, servers)
	if err != nil || len(added) == 0 {
		return false, err
	}
	data, err := configText(old, doc, len(added))
	if err != nil {
		return false, err
	}
	if dry {
		fmt.Fprint(w, maskedConfigDiff(cfg, old, data))
		return secret, nil
	}
	if err := writeConfig(cfg, data, secret); err != nil {
		return false, err
	}
	fmt.Fprintf(w, "imported into %s from %s: %s\n", cfg, hf.path, strings.Join(added, ", "))
	if secret {
		fmt.Fprintf(w, "%s holds env or header values copied from %s and is readable by you alone (mode 0600)\n", cfg, hf.path)
	}
	if configHoldsSecret(cfg) {
		warnUnignored(w, cfg)
	}
	return secret, nil
}

// configText is the config with the n servers addServers added to doc:
// old with their text written in, every byte of old kept, when that loads
// as doc does; else doc encoded whole (a flow-style servers mapping).
func configText(old []byte, doc *yaml.Node, n int) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	list := mappingValue(doc.Content[0], "servers")
	added := &yaml.Node{Kind: yaml.MappingNode, Content: list.Content[len(list.Content)-2*n:]}
	if out, ok := withServers(old, added, buf.Bytes()); ok {
		return out, nil
	}
	return buf.Bytes(), nil
}

// configDoc parses mcpx-fw's config as a YAML tree, comments and key
// order kept; a missing or empty file is an empty mapping.
func configDoc(path string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config %s: not a mapping of keys", path)
	}
	return &doc, nil
}

// addServers appends to the config's servers each host server it does not
// name yet; an entry that already starts mcpx-fw serve is left out.
func addServers(doc *yaml.Node, servers []hostconfig.Server) (added []string, secret bool, err error) {
	list := mappingValue(doc.Content[0], "servers")
	for _, s := range servers {
		if s.Connected || mappingValue(list, s.Name) != nil {
			continue
		}
		if strings.Contains(s.Name, ".") {
			return nil, false, fmt.Errorf("server %q: a name with a dot cannot be a config key; rename it in the host's file", s.Name)
		}
		entry, isSecret, err := imported(s)
		if err != nil {
			return nil, false, fmt.Errorf("server %s: %w", s.Name, err)
		}
		var node yaml.Node
		if err := node.Encode(entry); err != nil {
			return nil, false, err
		}
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Name}, &node)
		added, secret = append(added, s.Name), secret || isSecret
	}
	return added, secret, nil
}

// mappingValue is the value of key in m (names compared as the config
// folds them), made an empty mapping when m is the top level and lacks
// servers; nil when absent otherwise.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !strings.EqualFold(m.Content[i].Value, key) {
			continue
		}
		v := m.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" { // "servers:" with nothing under it
			*v = yaml.Node{Kind: yaml.MappingNode}
		}
		return v
	}
	if key != "servers" || m.Kind != yaml.MappingNode {
		return nil
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

// hostRef is a reference the host fills in: ${env:NAME} in Cursor's and
// VS Code's files, ${NAME} in Claude Code's.
var hostRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// imported is the config entry of a host server, and whether it holds a
// value copied from the host's file. An env value the host fills in, and
// a header's ${input:id}, is passed on by name: the connected entry keeps
// it in its own env (Server.HostVars), so serve has it in its
// environment.
func imported(s hostconfig.Server) (importedServer, bool, error) {
	e := importedServer{URL: s.URL, Dir: s.Dir}
	if strings.Contains(s.Dir, "${") {
		return e, false, fmt.Errorf("cwd %s is filled in by the host, which serve cannot do: write the folder as dir in the config", s.Dir)
	}
	if s.Command != "" {
		e.Command = append([]string{s.Command}, s.Args...)
	}
	secret := false
	vars := s.HostVars()
	for name, v := range s.Env {
		if e.Env == nil {
			e.Env = map[string]string{}
		}
		if _, ok := vars[name]; ok {
			v = "${" + name + "}"
		} else {
			secret = true
		}
		e.Env[name] = v
	}
	for name, v := range s.Headers {
		v, ok := s.HeaderInputs(v, vars)
		if !ok {
			return e, false, fmt.Errorf("header %s asks the host for a value (${input:…}) whose variable the server's env already names: rename that env member, or write the header in the config", name)
		}
		if e.Headers == nil {
			e.Headers = map[string]string{}
		}
		e.Headers[name] = hostRef.ReplaceAllString(v, "$${$1}")
		secret = secret || !strings.Contains(v, "${")
	}
	return e, secret, nil
}

// writeConfig writes mcpx-fw's config, 0600 when it holds copied values
// (a file that was more open is narrowed), else keeping its mode.
func writeConfig(path string, data []byte, secret bool) error {
	mode := fs.FileMode(0o600)
	if info, err := os.Stat(path); err == nil && !secret {
		mode = info.Mode().Perm()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
