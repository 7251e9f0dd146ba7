package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"
)

// problems are what is wrong with a config, each placed where the user
// fixes it: FILE:LINE for what the file says, the MCPXFW_* variable for what
// the environment says. Load reports them all at once, one line each, in
// the file's order.
type problems struct {
	file       string     // the config file as given; "" when none was read
	doc        *yaml.Node // its root; nil when none
	list       []problem
	notDecoded []string // lower-case keys whose value did not decode: verify's word on them is noise
}

type problem struct {
	line int    // the file's line; 0 when the problem is at none
	text string // the whole line, place first
}

// at records a problem at a line of the file.
func (p *problems) at(line int, format string, args ...any) {
	p.list = append(p.list, problem{line, fmt.Sprintf("%s:%d: ", p.file, line) + fmt.Sprintf(format, args...)})
}

// undecoded records that key's value, in the file at line, is not a value
// of typ; found says what it is instead, never what it says.
func (p *problems) undecoded(line int, key string, typ reflect.Type, found string) {
	p.notDecoded = append(p.notDecoded, strings.ToLower(key))
	p.at(line, "%s: want %s, found %s", key, describe(typ), found)
}

// bad is verify's report of a problem with key, as verify names keys
// (servers.NAME.url, limits.max_bytes): it is placed at the variable that
// set the key, else at the line of the file that wrote it, or the nearest
// section that holds it.
func (p *problems) bad(key, format string, args ...any) {
	if p.covered(key) {
		return
	}
	msg := key + ": " + fmt.Sprintf(format, args...)
	switch line := lineOf(p.doc, key); {
	case os.Getenv(envName(key)) != "":
		p.list = append(p.list, problem{0, envName(key) + ": " + msg})
	case line > 0:
		p.at(line, "%s", msg)
	case p.file != "":
		p.list = append(p.list, problem{0, p.file + ": " + msg})
	default:
		p.list = append(p.list, problem{0, msg})
	}
}

// covered tells whether key is, or is inside, a key whose value did not
// decode: its zero value would only repeat that problem.
func (p *problems) covered(key string) bool {
	key = strings.ToLower(key)
	return slices.ContainsFunc(p.notDecoded, func(u string) bool {
		return key == u || strings.HasPrefix(key, u+".") || strings.HasPrefix(key, u+"[")
	})
}

// err is every problem, one a line: the file's in its order, then the
// rest.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	slices.SortStableFunc(p.list, func(a, b problem) int {
		return cmp.Or(cmp.Compare(rank(a.line), rank(b.line)), cmp.Compare(a.text, b.text))
	})
	lines := make([]string, 0, len(p.list))
	for _, pr := range p.list {
		lines = append(lines, pr.text)
	}
	return ProblemsError(slices.Compact(lines))
}

// ProblemsError is every problem of a config, a line each, each placed
// first (FILE:LINE, FILE or the MCPXFW_* variable): a command prints each
// line the same way, as a compiler does.
type ProblemsError []string

func (e ProblemsError) Error() string { return strings.Join(e, "\n") }

// Lines are the problems, one a line.
func (e ProblemsError) Lines() []string { return e }

// rank puts a problem at no line after every line of the file.
func rank(line int) int {
	if line == 0 {
		return math.MaxInt
	}
	return line
}

// envName is the variable that sets key, as viper's overlay names it.
func envName(key string) string {
	return "MCPXFW_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// lineOf is the line that writes key in the file, or the nearest section
// above it that is written there; 0 when none is. Keys match whatever their
// case, as viper folds them; [N] picks a list's entry.
func lineOf(doc *yaml.Node, key string) int {
	if doc == nil {
		return 0
	}
	node, line := doc, 0
	for _, part := range keyParts(key) {
		next, at := child(node, part)
		if next == nil {
			break
		}
		node, line = next, at
	}
	return line
}

// keyParts splits servers.a.elicitation.allowed_hosts[1] into servers, a,
// elicitation, allowed_hosts and [1].
func keyParts(key string) []string {
	var parts []string
	for part := range strings.SplitSeq(key, ".") {
		name, index, found := strings.Cut(part, "[")
		parts = append(parts, name)
		if found {
			parts = append(parts, "["+index)
		}
	}
	return parts
}

// child is the value under part in a mapping (or the entry [N] of a
// list), and the line that writes it.
func child(node *yaml.Node, part string) (*yaml.Node, int) {
	node = resolved(node)
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if strings.EqualFold(node.Content[i].Value, part) {
				return node.Content[i+1], node.Content[i].Line
			}
		}
	case yaml.SequenceNode:
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if err == nil && strings.HasPrefix(part, "[") && i >= 0 && i < len(node.Content) {
			return node.Content[i], node.Content[i].Line
		}
	}
	return nil, 0
}

// resolved is node with the document wrapper and aliases looked through;
// nothing (an empty file) is null.
func resolved(node *yaml.Node) *yaml.Node {
	for node != nil && (node.Kind == yaml.DocumentNode || node.Kind == yaml.AliasNode) {
		if node.Kind == yaml.AliasNode {
			node = node.Alias
		} else if len(node.Content) > 0 {
			node = node.Content[0]
		} else {
			node = nil
		}
	}
	if node == nil || node.Kind == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return node
}

// yamlLine is the line a YAML error names.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// parseFile reads the config file's YAML, keeping each key's line. A
// syntax error, or a key written twice in one mapping, is one line
// naming FILE:LINE.
func parseFile(path string, b []byte) (*yaml.Node, error) {
	var doc yaml.Node
	var plain any // decoding into a map is what finds a key written twice
	err := cmp.Or(yaml.Unmarshal(b, &doc), yaml.Unmarshal(b, &plain))
	var te *yaml.TypeError
	switch {
	case err == nil:
		return &doc, nil
	case errors.As(err, &te):
		lines := make(ProblemsError, len(te.Errors))
		for i, e := range te.Errors {
			lines[i] = yamlError(path, e)
		}
		return nil, lines
	}
	return nil, errors.New(yamlError(path, err.Error()))
}

// yamlError is one of yaml's messages placed at FILE:LINE (FILE alone when
// it names no line).
func yamlError(path, msg string) string {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s: %s", path, m[1], msg[len(m[0]):])
	}
	return path + ": " + strings.TrimPrefix(msg, "yaml: ")
}

// unforeseen reports the keys of a decoding error that checkFile and
// checkEnv let through, in the config's words rather than mapstructure's.
func (p *problems) unforeseen(err error) {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		key := strings.NewReplacer("[", ".", "]", "").Replace(e.Name())
		if key == reflect.TypeFor[Config]().String() { // how mapstructure names the root
			key = ""
		}
		keys, ok := strings.CutPrefix(e.Unwrap().Error(), "has invalid keys: ")
		if !ok {
			p.bad(key, "not a value this key takes")
			return
		}
		for k := range strings.SplitSeq(keys, ", ") {
			p.bad(join(key, k), "unknown key")
		}
	case interface{ Unwrap() []error }:
		for _, err := range e.Unwrap() {
			p.unforeseen(err)
		}
	case interface{ Unwrap() error }:
		p.unforeseen(e.Unwrap())
	default: // the decoder's own words may quote a value
		p.bad("config", "a value cannot be read into its key")
	}
}
