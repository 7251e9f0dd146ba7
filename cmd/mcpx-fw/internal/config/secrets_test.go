package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
)

// canary stands for a secret (a token, a password in a URL) written where
// the config wants something else: no problem line may show it.
const canary = "sk-live-CANARY0x5f3759df"

// placedAtLine is a problem line placed at a line of the file.
var placedAtLine = regexp.MustCompile(`^mcpx-fw\.yaml:[1-9][0-9]*: `)

// TestConfigProblemsShowNoValueOfAnyKey: a config in which every key
// there is (every section, every server key, every map's entry) holds the
// canary in a shape its key does not take is refused with one line per
// key, each at its line of the file, none showing the value.
func TestConfigProblemsShowNoValueOfAnyKey(t *testing.T) {
	configtest.CleanEnv(t)
	doc, keys := wrongShapes(reflect.TypeFor[Config]())
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadHere(t, string(b))
	if err == nil {
		t.Fatalf("Load took a config whose every value is in the wrong shape:\n%s", b)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != keys {
		t.Errorf("%d problem lines for %d keys:\n%v", len(lines), keys, err)
	}
	for _, line := range lines {
		if !placedAtLine.MatchString(line) {
			t.Errorf("problem line %q names no line of mcpx-fw.yaml", line)
		}
	}
	if strings.Contains(err.Error(), "CANARY") {
		t.Errorf("a problem line shows a value:\n%v", err)
	}
}

// wrongShapes is, for typ's keys, a value of the wrong shape each holding
// the canary, and how many keys that is: a list for a string, a mapping
// for a list, a string for a number, a duration or true/false; a section
// or a map has one entry of its own so written (a server, a header).
func wrongShapes(typ reflect.Type) (any, int) {
	switch {
	case typ.Kind() == reflect.Struct && typ != timeType:
		doc, n := map[string]any{}, 0
		for name, t := range fieldsOf(typ) {
			var k int
			doc[name], k = wrongShapes(t)
			n += k
		}
		return doc, n
	case typ.Kind() == reflect.Map:
		entry, n := wrongShapes(typ.Elem())
		return map[string]any{"x": entry}, n
	case typ.Kind() == reflect.String:
		return []string{canary}, 1
	case typ.Kind() == reflect.Slice:
		return map[string]string{"a": canary}, 1
	}
	return canary, 1
}

// TestConfigProblemsShowNoValue: a value of the right shape that a check
// refuses (a word that is none of its key's, a URL, a host, an address,
// a header or environment name, a command line) is named by its key and
// what is wrong with it, never shown, unless it is a slip of the keyboard
// from one of its key's words.
func TestConfigProblemsShowNoValue(t *testing.T) {
	const server = "servers:\n  x:\n    "
	c := canary
	tests := []struct{ name, content, want string }{
		{"a word", "policy:\n  default: " + c + "\n", "mcpx-fw.yaml:2: policy.default: want one of review, deny, permit"},
		{"a level", "log:\n  level: " + c + "\n", "mcpx-fw.yaml:2: log.level: want one of debug, info, warn, error"},
		{"an isolation", "isolation:\n  default: " + c + "\n", "mcpx-fw.yaml:2: isolation.default: want one of namespaces, none"},
		{"a protocol", server + "command: [cat]\n    protocol: " + c + "\n", "mcpx-fw.yaml:4: servers.x.protocol: want one of auto, legacy, "},
		{"a URL with credentials but no scheme", server + "url: admin:" + c + "@example.com/mcp\n",
			"mcpx-fw.yaml:3: servers.x.url: want an http:// or https:// URL such as https://example.com/mcp, found another scheme"},
		{"a URL that does not parse", server + "url: \"https://" + c + "@exa mple.com:x/\"\n",
			"mcpx-fw.yaml:3: servers.x.url: want an http:// or https:// URL such as https://example.com/mcp, found a string that is not a URL"},
		{"a service URL", "decision_log:\n  service:\n    url: " + c + "\n",
			"mcpx-fw.yaml:3: decision_log.service.url: want an http:// or https:// URL such as https://logs.example.com, found one without a scheme"},
		{"a service resource", "decision_log:\n  service:\n    url: https://logs.example.com\n    resource: " + c + "\n",
			"mcpx-fw.yaml:4: decision_log.service.resource: want a path starting with /, such as /logs"},
		{"a tracing endpoint", "tracing:\n  otlp:\n    endpoint: ftp://u:" + c + "@collector\n",
			"mcpx-fw.yaml:3: tracing.otlp.endpoint: want an http:// or https:// URL such as https://collector:4318/v1/traces, found another scheme"},
		{"an allowed host", server + "command: [cat]\n    elicitation:\n      allowed_hosts: [\"https://u:" + c + "@auth.example.com\"]\n",
			"mcpx-fw.yaml:5: servers.x.elicitation.allowed_hosts[0]: not a host name (it has a scheme): write the host alone (auth.example.com), without scheme, port, path or wildcard"},
		{"a metrics address", "metrics:\n  addr: " + c + "\n", "mcpx-fw.yaml:2: metrics.addr: want HOST:PORT, such as 127.0.0.1:9464"},
		{"a header line pasted as a name", server + "url: https://example.com/mcp\n    headers:\n      \"Authorization: Bearer " + c + "\": x\n",
			"mcpx-fw.yaml:4: servers.x.headers: a header name holds a character HTTP does not allow in one"},
		{"a service header line pasted as a name", "tracing:\n  otlp:\n    headers:\n      \"Authorization: Bearer " + c + "\": x\n",
			"mcpx-fw.yaml:3: tracing.otlp.headers: a header name holds a character HTTP does not allow in one"},
		{"an assignment pasted as an env name", server + "command: [cat]\n    env:\n      \"API_KEY=" + c + "\": x\n",
			"mcpx-fw.yaml:4: servers.x.env: an environment name is empty or holds '=' or NUL: write NAME: value"},
		{"a command line with a token", server + "command: npx -y server --api-key " + c + "\n",
			"mcpx-fw.yaml:3: servers.x.command: " + commandLineText + ", or as command: npx with args: [-y, pkg]"},
		{"a notify command line with a token", "review:\n  notify:\n    command: notify --token " + c + "\n",
			"mcpx-fw.yaml:3: review.notify.command: " + commandLineText},
		{"a file holding a value alone", c + "\n", "mcpx-fw.yaml:1: the file holds a string, where mcpx-fw reads keys such as servers: and policy:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configtest.CleanEnv(t)
			t.Setenv("PATH", t.TempDir())
			_, err := loadHere(t, tt.content)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want the one line %q…", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "CANARY") {
				t.Errorf("the problem shows the value: %v", err)
			}
		})
	}
}

// TestConfigEnvProblemsShowNoValue: a variable's value is no more shown
// than the file's.
func TestConfigEnvProblemsShowNoValue(t *testing.T) {
	configtest.CleanEnv(t)
	for _, v := range []string{"MCPXFW_POLICY_TIMEOUT", "MCPXFW_HTTP_MAX_SESSIONS", "MCPXFW_HTTP_ALLOW_REMOTE", "MCPXFW_LOG_LEVEL"} {
		t.Setenv(v, canary)
	}
	_, err := loadHere(t, "")
	wantLines(t, err, []string{
		"MCPXFW_HTTP_ALLOW_REMOTE: http.allow_remote: want true or false, found a value that is not one",
		"MCPXFW_HTTP_MAX_SESSIONS: http.max_sessions: want a whole number, found a value that is not one",
		"MCPXFW_LOG_LEVEL: log.level: want one of debug, info, warn, error",
		"MCPXFW_POLICY_TIMEOUT: policy.timeout: want a duration such as 250ms or 10m, found a value that is not one",
	})
}
