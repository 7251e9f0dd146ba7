package main

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/hostconfig"
)

// maskedConfigDiff is the diff of two versions of mcpx-fw's config with
// every env and headers value of its servers shown as hostconfig.Hidden,
// its length and none of its characters: what a dry run prints.
func maskedConfigDiff(name string, old, new []byte) string {
	return hostconfig.Diff(name, maskConfig(name, old), maskConfig(name, new))
}

// maskConfig is data with each secret value hidden, line for line. A
// value whose end on its line cannot be told (a block scalar, a quoted
// one over several lines, a tagged one) hides the rest of its line and
// every line up to the next node. A file that is not YAML is not shown.
func maskConfig(name string, data []byte) []byte {
	if len(data) == 0 {
		return data
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []byte("«" + name + " is not read as YAML: its lines are not shown»\n")
	}
	lines := strings.SplitAfter(string(data), "\n")
	secrets := configSecrets(&doc)
	slices.SortFunc(secrets, func(a, b *yaml.Node) int { // from the end: earlier columns stay valid
		return cmp.Or(cmp.Compare(b.Line, a.Line), cmp.Compare(b.Column, a.Column))
	})
	all := nodePositions(&doc)
	for _, s := range secrets {
		hideScalar(lines, s, all)
	}
	return []byte(strings.Join(lines, ""))
}

// configSecrets are the scalars of every server's env and headers (keys
// folded as the config folds them), with what an alias there names.
func configSecrets(doc *yaml.Node) []*yaml.Node {
	if len(doc.Content) == 0 {
		return nil
	}
	var out []*yaml.Node
	for _, server := range values(lookup(doc.Content[0], "servers")) {
		for _, key := range []string{"env", "headers"} {
			for _, v := range values(lookup(server, key)) {
				out = append(out, scalars(v)...)
			}
		}
	}
	return out
}

// lookup is the value of key in the mapping m, nil when there is none.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			return m.Content[i+1]
		}
	}
	return nil
}

// values are the values of the mapping m.
func values(m *yaml.Node) []*yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out []*yaml.Node
	for i := 1; i < len(m.Content); i += 2 {
		out = append(out, m.Content[i])
	}
	return out
}

// scalars are the scalars in n, following an alias to what it names.
func scalars(n *yaml.Node) []*yaml.Node {
	switch n.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{n}
	case yaml.AliasNode:
		if n.Alias != nil {
			return scalars(n.Alias)
		}
		return nil
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		out = append(out, scalars(c)...)
	}
	return out
}

// nodePositions are the line and column of every node, in file order.
func nodePositions(doc *yaml.Node) [][2]int {
	var out [][2]int
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		out = append(out, [2]int{n.Line, n.Column})
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	slices.SortFunc(out, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return out
}

// hideScalar puts hostconfig.Hidden in place of the scalar s in lines.
func hideScalar(lines []string, s *yaml.Node, all [][2]int) {
	i := s.Line - 1
	if i < 0 || i >= len(lines) {
		return
	}
	line := lines[i]
	off := byteOffset(line, s.Column-1)
	end := scalarEnd(line, off, s)
	if end >= 0 {
		lines[i] = line[:off] + hostconfig.Hidden(s.Value) + line[end:]
		return
	}
	lines[i] = line[:off] + hostconfig.Hidden(s.Value) + lineEnd(line)
	hideUntilNext(lines, s, all)
}

// hideUntilNext blanks the lines after s's up to the next node, and on
// the next node's line what comes before it.
func hideUntilNext(lines []string, s *yaml.Node, all [][2]int) {
	next := [2]int{len(lines) + 1, 1}
	for _, p := range all {
		if p[0] > s.Line || p[0] == s.Line && p[1] > s.Column {
			next = p
			break
		}
	}
	for j := s.Line; j < next[0]-1 && j < len(lines); j++ {
		lines[j] = lineEnd(lines[j])
	}
	if j := next[0] - 1; j >= s.Line && j < len(lines) {
		off := byteOffset(lines[j], next[1]-1)
		lines[j] = strings.Repeat(" ", utf8.RuneCountInString(lines[j][:off])) + lines[j][off:]
	}
}

// scalarEnd is the byte offset just past the scalar starting at off of
// line, or -1 when it does not end on this line as written.
func scalarEnd(line string, off int, s *yaml.Node) int {
	rest := line[off:]
	switch {
	case s.Style&yaml.DoubleQuotedStyle != 0 && strings.HasPrefix(rest, `"`):
		for j := 1; j < len(rest); j++ {
			switch rest[j] {
			case '\\':
				j++
			case '"':
				return off + j + 1
			}
		}
	case s.Style&yaml.SingleQuotedStyle != 0 && strings.HasPrefix(rest, "'"):
		for j := 1; j < len(rest); j++ {
			if rest[j] == '\'' {
				if j+1 < len(rest) && rest[j+1] == '\'' {
					j++
					continue
				}
				return off + j + 1
			}
		}
	case s.Style&^yaml.FlowStyle == 0 && s.Value != "" && strings.HasPrefix(rest, s.Value):
		return off + len(s.Value)
	}
	return -1
}

// byteOffset is the offset in line of its column'th character.
func byteOffset(line string, column int) int {
	off := 0
	for range column {
		if off >= len(line) {
			break
		}
		_, n := utf8.DecodeRuneInString(line[off:])
		off += n
	}
	return off
}

// lineEnd is the line break that ends line, if any.
func lineEnd(line string) string {
	if strings.HasSuffix(line, "\r\n") {
		return "\r\n"
	}
	if strings.HasSuffix(line, "\n") {
		return "\n"
	}
	return ""
}
