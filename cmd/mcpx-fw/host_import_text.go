package main

import (
	"bytes"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// withServers is old, mcpx-fw's config, with the added servers (a
// mapping of name to entry) written in as text: at the end of its block
// servers mapping, or a servers mapping at the end of the file, so every
// byte of old stays where it was (comments, their spacing, quoting). It
// is used only when the result loads as the same config as want, the
// whole file encoded again; else ok is false.
func withServers(old []byte, added *yaml.Node, want []byte) (out []byte, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(old, &doc); err != nil {
		return nil, false
	}
	at, indent, wrap, ok := serversEnd(old, &doc)
	if !ok {
		return nil, false
	}
	text, err := entriesText(added, indent)
	if err != nil {
		return nil, false
	}
	insert := append([]byte(wrap), text...)
	if head := old[:at]; len(head) > 0 && !bytes.HasSuffix(head, []byte("\n")) {
		insert = append([]byte("\n"), insert...)
	}
	if bytes.Contains(old, []byte("\r\n")) { // the file's line ends
		insert = bytes.ReplaceAll(insert, []byte("\n"), []byte("\r\n"))
	}
	out = slices.Concat(old[:at], insert, old[at:])
	return out, sameConfig(out, want)
}

// serversEnd is the byte offset where new servers go and their indent:
// after the last line of a block servers mapping (the comments at the top
// level after it belong to the next key), after a servers key with
// nothing under it, or at the end of a file with no servers key (then
// wrap is the key to write first). A servers value written any other way
// (flow style, ~) is not ok.
func serversEnd(old []byte, doc *yaml.Node) (at int, indent string, wrap string, ok bool) {
	lines := strings.SplitAfter(string(old), "\n")
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return len(old), "  ", "servers:\n", true
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode || top.Style&yaml.FlowStyle != 0 {
		return 0, "", "", false
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if !strings.EqualFold(top.Content[i].Value, "servers") {
			continue
		}
		key, v := top.Content[i], top.Content[i+1]
		next := len(lines) + 1
		if i+2 < len(top.Content) {
			next = top.Content[i+2].Line
		}
		return blockEnd(lines, key, v, next)
	}
	return len(old), "  ", "servers:\n", true
}

// blockEnd is serversEnd of the servers key and its value v, with the
// next top-level key at line next.
func blockEnd(lines []string, key, v *yaml.Node, next int) (int, string, string, bool) {
	keyIndent := strings.Repeat(" ", key.Column-1)
	switch {
	case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
		indent := strings.Repeat(" ", v.Content[0].Column-1)
		last := key.Line
		for l := key.Line; l < next && l <= len(lines); l++ {
			t := strings.TrimLeft(lines[l-1], " ")
			if strings.TrimSpace(t) != "" && (!strings.HasPrefix(t, "#") || len(lines[l-1])-len(t) >= len(indent)) {
				last = l
			}
		}
		return offsetOfLine(lines, last+1), indent, "", true
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" && emptyAfterKey(lines[key.Line-1], key):
		return offsetOfLine(lines, key.Line+1), keyIndent + "  ", "", true
	}
	return 0, "", "", false
}

// emptyAfterKey tells whether the key's line holds nothing after
// "servers:" but a comment.
func emptyAfterKey(line string, key *yaml.Node) bool {
	rest := line[byteOffset(line, key.Column-1):]
	_, after, found := strings.Cut(rest, ":")
	after = strings.TrimSpace(after)
	return found && (after == "" || strings.HasPrefix(after, "#"))
}

// offsetOfLine is the byte offset where line n (from 1) starts.
func offsetOfLine(lines []string, n int) int {
	off := 0
	for i := 0; i < n-1 && i < len(lines); i++ {
		off += len(lines[i])
	}
	return off
}

// entriesText is the added mapping written as YAML, each line indented.
func entriesText(added *yaml.Node, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(added); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l != "" {
			out.WriteString(indent + l)
		}
	}
	return out.Bytes(), nil
}

// sameConfig tells whether a and b load as the same values.
func sameConfig(a, b []byte) bool {
	var x, y any
	if yaml.Unmarshal(a, &x) != nil || yaml.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
