package mcpxfw_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file enforces the layering (ARCHITECTURE.md, Layers) on every .go
// file of the module (tests included, testdata excluded), by parsing the
// files: who may import the MCP SDK, cobra, viper, and call zap's
// constructors, and which way the project's packages may depend on each
// other.

// goFile is one parsed source file.
type goFile struct {
	path string // slash-separated, relative to the module root
	dir  string // its package folder, "." at the root
	test bool   // a _test.go file
	ast  *ast.File
	fset *token.FileSet
}

// layerRule is one rule of the layering. check returns one message per
// violation, each naming the file, the import (or call) and the rule.
type layerRule struct {
	name  string
	text  string
	check func(module string, f goFile) []string
}

const (
	sdkPath   = "github.com/modelcontextprotocol/go-sdk"
	cobraPath = "github.com/spf13/cobra"
	viperPath = "github.com/spf13/viper"
	zapPath   = "go.uber.org/zap"
	sysPath   = "golang.org/x/sys"
	pgxPath   = "github.com/jackc/pgx"
	promPath  = "github.com/prometheus"
)

// zapBuilders are the zap functions that build a logger with real output
// or touch zap's globals; only cmd/ (and tests) may call them. zap.NewNop,
// a logger that writes nothing, is allowed as a fallback for a nil logger.
var zapBuilders = map[string]bool{
	"New": true, "NewProduction": true, "NewDevelopment": true, "NewExample": true,
	"NewProductionConfig": true, "NewDevelopmentConfig": true,
	"L": true, "S": true, "ReplaceGlobals": true, "RedirectStdLog": true, "RedirectStdLogAt": true,
}

var layerRules = []layerRule{
	{
		name: "sdk-only-in-relay",
		text: "only relay/... imports the MCP SDK " + sdkPath,
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return hasPathPrefix(imp, sdkPath) && !under(f.dir, "relay")
		}),
	},
	{
		name: "cobra-viper-only-in-cmd",
		text: "only cmd/... imports cobra and viper",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return (hasPathPrefix(imp, cobraPath) || hasPathPrefix(imp, viperPath)) && !under(f.dir, "cmd")
		}),
	},
	{
		name:  "zap-constructors-only-in-cmd",
		text:  "zap loggers are built in cmd/... and passed in; other packages do not call zap.New* or zap's globals (tests may)",
		check: forbidZapBuilders,
	},
	{
		name: "validate-stdlib-only",
		text: "validate/ imports only the standard library (its tests may import more)",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "validate") && !f.test && !isStdlib(imp)
		}),
	},
	{
		name: "inert-stdlib-only",
		text: "cmd/mcpx-fw/inert imports only the standard library: any reader (the CLI, a browser console) can put it in front of a person",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "cmd/mcpx-fw/inert") && !isStdlib(imp)
		}),
	},
	{
		name: "console-no-cli-frameworks",
		text: "cmd/mcpx-fw/console imports neither cobra, viper nor the relay: it serves pages over the Actions package main gives it",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "cmd/mcpx-fw/console") && (under(imp, cobraPath) || under(imp, viperPath) || under(imp, module+"/relay"))
		}),
	},
	{
		name: "render-no-cli-frameworks",
		text: "cmd/mcpx-fw/render imports neither cobra, viper, zap (its tests may) nor the relay: it lays out what package main reads and hands it",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "cmd/mcpx-fw/render") && (under(imp, cobraPath) || under(imp, viperPath) ||
				under(imp, module+"/relay") || !f.test && under(imp, zapPath))
		}),
	},
	{
		name: "rendertest-only-for-tests",
		text: "only tests import cmd/mcpx-fw/render/rendertest: its checks and fixtures never ship in mcpx-fw",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return hasPathPrefix(imp, module+"/cmd/mcpx-fw/render/rendertest") && !f.test
		}),
	},
	{
		name: "no-templates",
		text: "no mcpx-fw package imports text/template or html/template: a binary that can run a template keeps every exported method of every type it links, megabytes resident in every serve",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return !f.test && (imp == "text/template" || imp == "html/template")
		}),
	},
	{
		name: "review-imports-no-project-package",
		text: "engine/review imports no other mcpx-fw package",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "engine/review") && hasPathPrefix(imp, module) &&
				!hasPathPrefix(imp, module+"/engine/review")
		}),
	},
	{
		name: "pgx-only-in-review",
		text: "only engine/review imports pgx: the store is the one place that speaks to PostgreSQL",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return hasPathPrefix(imp, pgxPath) && !under(f.dir, "engine/review")
		}),
	},
	{
		name: "pgtest-stdlib-only-for-tests",
		text: "engine/review/pgtest imports only the standard library, and only tests import it: it starts throwaway PostgreSQL clusters",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			if under(f.dir, "engine/review/pgtest") {
				return !isStdlib(imp)
			}
			return hasPathPrefix(imp, module+"/engine/review/pgtest") && !f.test
		}),
	},
	{
		name: "bundletest-stdlib-only-for-tests",
		text: "engine/policybundle/bundletest imports only the standard library, and only tests import it: it builds opa and serves bundles",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			if under(f.dir, "engine/policybundle/bundletest") {
				return !isStdlib(imp)
			}
			return hasPathPrefix(imp, module+"/engine/policybundle/bundletest") && !f.test
		}),
	},
	{
		name: "sandboxtest-stdlib-only-for-tests",
		text: "relay/sandbox/sandboxtest imports only the standard library, and only tests import it: it points TMPDIR where isolated commands see it",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			if under(f.dir, "relay/sandbox/sandboxtest") {
				return !isStdlib(imp)
			}
			return hasPathPrefix(imp, module+"/relay/sandbox/sandboxtest") && !f.test
		}),
	},
	{
		name: "engine-not-relay-or-cmd",
		text: "engine/... does not import relay or cmd",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "engine") && (hasPathPrefix(imp, module+"/relay") || hasPathPrefix(imp, module+"/cmd"))
		}),
	},
	{
		name: "sandbox-stdlib-and-sys-only",
		text: "relay/sandbox imports only the standard library and golang.org/x/sys (its tests may import more): the launcher runs before everything else",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "relay/sandbox") && !f.test && !isStdlib(imp) && !hasPathPrefix(imp, sysPath)
		}),
	},
	{
		name: "relay-leaves-import-no-relay",
		text: "relay/seal, relay/secret and relay/internal/rawjson import no mcpx-fw package but relay/secret: relay uses them, never the other way",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			leaf := under(f.dir, "relay/seal") || under(f.dir, "relay/secret") || under(f.dir, "relay/internal/rawjson")
			return leaf && hasPathPrefix(imp, module) && !hasPathPrefix(imp, module+"/relay/secret")
		}),
	},
	{
		name: "opa-plugins-only-in-engine",
		text: "only engine/... imports OPA's plugin machinery (plugins, plugins/logs, plugins/rest, server, download, bundle)",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return isOPAPlugin(imp) && !under(f.dir, "engine")
		}),
	},
	{
		name: "prometheus-only-in-telemetry",
		text: "only engine/telemetry imports github.com/prometheus/... (tests may): one package defines every metric",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return hasPathPrefix(imp, promPath) && !under(f.dir, "engine/telemetry") && !f.test
		}),
	},
	{
		name: "telemetry-a-leaf",
		text: "engine/telemetry imports no mcpx-fw package: it reads what it reports through funcs its caller passes",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "engine/telemetry") && hasPathPrefix(imp, module)
		}),
	},
	{
		name: "otel-sdk-only-in-tracing",
		text: "only relay/tracing (and cmd, which builds the provider) imports OpenTelemetry's SDK and exporters, and only cmd its global API: packages are handed a trace.Tracer",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			sdk := hasPathPrefix(imp, "go.opentelemetry.io/otel/sdk") || hasPathPrefix(imp, "go.opentelemetry.io/otel/exporters")
			return (sdk && !under(f.dir, "relay/tracing") && !under(f.dir, "cmd")) ||
				(imp == "go.opentelemetry.io/otel" && !under(f.dir, "cmd"))
		}),
	},
	{
		name: "peer-only-in-tests",
		text: "only tests (and testdata) import relay/peer: its hostile, load and attack tools never ship in mcpx-fw",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return hasPathPrefix(imp, module+"/relay/peer") && !f.test && !under(f.dir, "relay/peer")
		}),
	},
	{
		name: "demopeer-sdk-and-stdlib-only",
		text: "relay/demopeer imports only the standard library and the MCP SDK (its tests may import more): the demo's peers ship in mcpx-fw, so they hold nothing of the test peers",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "relay/demopeer") && !f.test && !isStdlib(imp) && !hasPathPrefix(imp, sdkPath)
		}),
	},
	{
		name: "hostcheck-stdlib-only",
		text: "cmd/mcpx-fw/hostcheck imports only the standard library: the console and the ops listener share it",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "cmd/mcpx-fw/hostcheck") && !isStdlib(imp)
		}),
	},
	{
		name: "hostconfig-stdlib-only",
		text: "cmd/mcpx-fw/internal/hostconfig imports only the standard library: it edits files the hosts own, with encoding/json alone",
		check: forbidImports(func(_ string, f goFile, imp string) bool {
			return under(f.dir, "cmd/mcpx-fw/internal/hostconfig") && !isStdlib(imp)
		}),
	},
	{
		name: "relay-not-cmd",
		text: "relay/... does not import cmd",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			return under(f.dir, "relay") && hasPathPrefix(imp, module+"/cmd")
		}),
	},
	{
		name:  "one-error-vocabulary",
		text:  "no jsonrpc.Error literal outside relay/internal/refusal, the one vocabulary of the errors the firewall sends; the test peers (relay/peer, relay/demopeer) and tests may build them where they stand in for an upstream or a host",
		check: forbidErrorLiterals,
	},
	{
		name: "internal-not-parent",
		text: "a package under an internal/ folder imports no package of a folder above it (relay/internal/x imports neither relay nor relay/internal): internal packages are leaves their parent uses",
		check: forbidImports(func(module string, f goFile, imp string) bool {
			rel, ok := strings.CutPrefix(imp, module+"/")
			return ok && isInternal(f.dir) && rel != f.dir && under(f.dir, rel)
		}),
	},
}

// isOPAPlugin reports whether imp is part of OPA's plugin machinery, which
// runs network clients and a plugin manager: engine's to run, not cmd's.
func isOPAPlugin(imp string) bool {
	for _, p := range []string{"plugins", "server", "download", "bundle"} {
		if hasPathPrefix(imp, "github.com/open-policy-agent/opa/v1/"+p) {
			return true
		}
	}
	return false
}

// TestImportLayers applies every rule to every .go file of the module.
func TestImportLayers(t *testing.T) {
	module := modulePath(t, "go.mod")
	files := parseTree(t, ".")
	if len(files) < 10 {
		t.Fatalf("found only %d .go files; is the test running at the module root?", len(files))
	}
	for _, r := range layerRules {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range applyRule(r, module, files) {
				t.Error(v)
			}
		})
	}
}

// TestImportLayersCatchViolations feeds the checker synthetic files, one
// violation per rule, and clean files that must pass.
func TestImportLayersCatchViolations(t *testing.T) {
	const mod = "example.com/fw"
	tests := []struct {
		rule, path, src string
		mention         string // what the message must name besides file and rule
	}{
		{"console-no-cli-frameworks", "cmd/mcpx-fw/console/x.go", `package console; import _ "github.com/spf13/cobra"`, `"github.com/spf13/cobra"`},
		{"render-no-cli-frameworks", "cmd/mcpx-fw/render/x.go", `package render; import _ "github.com/spf13/viper"`, `"github.com/spf13/viper"`},
		{"render-no-cli-frameworks", "cmd/mcpx-fw/render/x.go", `package render; import "go.uber.org/zap"`, `"go.uber.org/zap"`},
		{"render-no-cli-frameworks", "cmd/mcpx-fw/render/rendertest/x.go", `package rendertest; import "example.com/fw/relay"`, `"example.com/fw/relay"`},
		{"rendertest-only-for-tests", "cmd/mcpx-fw/x.go", `package main; import "example.com/fw/cmd/mcpx-fw/render/rendertest"`, `"example.com/fw/cmd/mcpx-fw/render/rendertest"`},
		{"no-templates", "cmd/mcpx-fw/console/x.go", `package console; import "html/template"`, `"html/template"`},
		{"no-templates", "engine/x.go", `package engine; import tt "text/template"`, `"text/template"`},
		{"sdk-only-in-relay", "engine/x.go", `package engine; import _ "github.com/modelcontextprotocol/go-sdk/mcp"`, `"github.com/modelcontextprotocol/go-sdk/mcp"`},
		{"sdk-only-in-relay", "cmd/mcpx-fw/x_test.go", `package main; import "github.com/modelcontextprotocol/go-sdk/jsonrpc"`, `"github.com/modelcontextprotocol/go-sdk/jsonrpc"`},
		{"sdk-only-in-relay", "relayx/x.go", `package relayx; import "github.com/modelcontextprotocol/go-sdk"`, `"github.com/modelcontextprotocol/go-sdk"`},
		{"cobra-viper-only-in-cmd", "relay/x.go", `package relay; import "github.com/spf13/cobra"`, `"github.com/spf13/cobra"`},
		{"cobra-viper-only-in-cmd", "engine/x_test.go", `package engine; import v "github.com/spf13/viper"`, `"github.com/spf13/viper"`},
		{"zap-constructors-only-in-cmd", "engine/x.go", `package engine; import "go.uber.org/zap"; var l, _ = zap.NewProduction()`, "zap.NewProduction"},
		{"zap-constructors-only-in-cmd", "relay/x.go", `package relay; import z "go.uber.org/zap"; func f() { z.New(nil) }`, "zap.New"},
		{"zap-constructors-only-in-cmd", "engine/review/x.go", `package review; import "go.uber.org/zap"; func f() { zap.ReplaceGlobals(nil) }`, "zap.ReplaceGlobals"},
		{"validate-stdlib-only", "validate/x.go", `package validate; import "go.uber.org/zap"`, `"go.uber.org/zap"`},
		{"validate-stdlib-only", "validate/x.go", `package validate; import "example.com/fw/engine"`, `"example.com/fw/engine"`},
		{"review-imports-no-project-package", "engine/review/x.go", `package review; import "example.com/fw/validate"`, `"example.com/fw/validate"`},
		{"review-imports-no-project-package", "engine/review/x_test.go", `package review_test; import "example.com/fw/engine"`, `"example.com/fw/engine"`},
		{"pgx-only-in-review", "cmd/mcpx-fw/x.go", `package main; import _ "github.com/jackc/pgx/v5/stdlib"`, `"github.com/jackc/pgx/v5/stdlib"`},
		{"pgx-only-in-review", "engine/x_test.go", `package engine; import "github.com/jackc/pgx/v5"`, `"github.com/jackc/pgx/v5"`},
		{"pgtest-stdlib-only-for-tests", "engine/review/pgtest/x.go", `package pgtest; import "go.uber.org/zap"`, `"go.uber.org/zap"`},
		{"pgtest-stdlib-only-for-tests", "engine/review/pgtest/x_test.go", `package pgtest; import "example.com/fw/engine/review"`, `"example.com/fw/engine/review"`},
		{"pgtest-stdlib-only-for-tests", "cmd/mcpx-fw/x.go", `package main; import "example.com/fw/engine/review/pgtest"`, `"example.com/fw/engine/review/pgtest"`},
		{"pgtest-stdlib-only-for-tests", "engine/review/x.go", `package review; import "example.com/fw/engine/review/pgtest"`, `"example.com/fw/engine/review/pgtest"`},
		{"sandboxtest-stdlib-only-for-tests", "relay/sandbox/sandboxtest/x.go", `package sandboxtest; import "golang.org/x/sys/unix"`, `"golang.org/x/sys/unix"`},
		{"sandboxtest-stdlib-only-for-tests", "cmd/mcpx-fw/x.go", `package main; import "example.com/fw/relay/sandbox/sandboxtest"`, `"example.com/fw/relay/sandbox/sandboxtest"`},
		{"engine-not-relay-or-cmd", "engine/x.go", `package engine; import "example.com/fw/relay"`, `"example.com/fw/relay"`},
		{"engine-not-relay-or-cmd", "engine/x_test.go", `package engine_test; import "example.com/fw/cmd/mcpx-fw"`, `"example.com/fw/cmd/mcpx-fw"`},
		{"opa-plugins-only-in-engine", "cmd/mcpx-fw/x.go", `package main; import "github.com/open-policy-agent/opa/v1/plugins/logs"`, `"github.com/open-policy-agent/opa/v1/plugins/logs"`},
		{"prometheus-only-in-telemetry", "relay/x.go", `package relay; import "github.com/prometheus/client_golang/prometheus"`, `"github.com/prometheus/client_golang/prometheus"`},
		{"telemetry-a-leaf", "engine/telemetry/x.go", `package telemetry; import "example.com/fw/engine"`, `"example.com/fw/engine"`},
		{"otel-sdk-only-in-tracing", "engine/x.go", `package engine; import _ "go.opentelemetry.io/otel/sdk/trace"`, `"go.opentelemetry.io/otel/sdk/trace"`},
		{"otel-sdk-only-in-tracing", "relay/x.go", `package relay; import "go.opentelemetry.io/otel"`, `"go.opentelemetry.io/otel"`},
		{"peer-only-in-tests", "cmd/mcpx-fw/x.go", `package main; import "example.com/fw/relay/peer"`, `"example.com/fw/relay/peer"`},
		{"peer-only-in-tests", "relay/x.go", `package relay; import "example.com/fw/relay/peer"`, `"example.com/fw/relay/peer"`},
		{"peer-only-in-tests", "relay/demopeer/x.go", `package demopeer; import "example.com/fw/relay/peer"`, `"example.com/fw/relay/peer"`},
		{"demopeer-sdk-and-stdlib-only", "relay/demopeer/x.go", `package demopeer; import "example.com/fw/engine/review"`, `"example.com/fw/engine/review"`},
		{"hostcheck-stdlib-only", "cmd/mcpx-fw/hostcheck/x.go", `package hostcheck; import "go.uber.org/zap"`, `"go.uber.org/zap"`},
		{"relay-leaves-import-no-relay", "relay/seal/x.go", `package seal; import "example.com/fw/relay"`, `"example.com/fw/relay"`},
		{"relay-leaves-import-no-relay", "relay/internal/rawjson/x_test.go", `package rawjson; import "example.com/fw/relay/seal"`, `"example.com/fw/relay/seal"`},
		{"relay-not-cmd", "relay/peer/x.go", `package peer; import "example.com/fw/cmd/mcpx-fw"`, `"example.com/fw/cmd/mcpx-fw"`},
		{"sandbox-stdlib-and-sys-only", "relay/sandbox/x.go", `package sandbox; import "go.uber.org/zap"`, `"go.uber.org/zap"`},
		{"sandbox-stdlib-and-sys-only", "relay/sandbox/x_linux.go", `package sandbox; import "example.com/fw/engine"`, `"example.com/fw/engine"`},
		{"one-error-vocabulary", "relay/x.go", `package relay; import "github.com/modelcontextprotocol/go-sdk/jsonrpc"; var e = &jsonrpc.Error{Code: -1}`, "jsonrpc.Error literal"},
		{"one-error-vocabulary", "relay/internal/pipeline/x.go", `package pipeline; import rpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"; var e = rpc.Error{}`, "jsonrpc.Error literal"},
		{"internal-not-parent", "relay/internal/refusal/x.go", `package refusal; import "example.com/fw/relay"`, `"example.com/fw/relay"`},
		{"internal-not-parent", "relay/internal/admit/x_test.go", `package admit_test; import "example.com/fw/relay/internal"`, `"example.com/fw/relay/internal"`},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.path, func(t *testing.T) {
			r := ruleNamed(t, tt.rule)
			got := applyRule(r, mod, []goFile{parseSource(t, tt.path, tt.src)})
			if len(got) != 1 {
				t.Fatalf("%s on %s: got %d violations %q, want 1", tt.rule, tt.path, len(got), got)
			}
			t.Log(got[0])
			for _, want := range []string{tt.path, tt.mention, tt.rule} {
				if !strings.Contains(got[0], want) {
					t.Errorf("message %q does not name %q", got[0], want)
				}
			}
		})
	}

	clean := []goFile{
		parseSource(t, "relay/x.go", `package relay; import ("github.com/modelcontextprotocol/go-sdk/mcp"; "go.uber.org/zap"; "example.com/fw/engine"); var l = zap.NewNop()`),
		parseSource(t, "cmd/mcpx-fw/x.go", `package main; import ("github.com/spf13/cobra"; "github.com/spf13/viper"; "go.uber.org/zap"); var l, _ = zap.NewProduction()`),
		parseSource(t, "engine/x_test.go", `package engine; import "go.uber.org/zap"; var l = zap.NewExample()`),
		parseSource(t, "engine/x.go", `package engine; import ("go.uber.org/zap"; "example.com/fw/validate"; "example.com/fw/engine/review"); func f(l *zap.Logger) { l.Info("") }`),
		parseSource(t, "engine/review/x.go", `package review; import ("go.uber.org/zap"; "modernc.org/sqlite")`),
		parseSource(t, "engine/review/x_test.go", `package review_test; import "example.com/fw/engine/review"`),
		parseSource(t, "validate/x.go", `package validate; import ("encoding/json"; "unicode/utf8")`),
		parseSource(t, "relay/sandbox/x_linux.go", `package sandbox; import ("os/exec"; "golang.org/x/sys/unix")`),
		parseSource(t, "relay/seal/x.go", `package seal; import ("example.com/fw/relay/secret"; "encoding/json")`),
		parseSource(t, "relay/sandbox/x_test.go", `package sandbox_test; import ("github.com/google/go-cmp/cmp"; "example.com/fw/relay/sandbox")`),
		parseSource(t, "validate/x_test.go", `package validate_test; import ("example.com/fw/validate"; "github.com/google/go-cmp/cmp")`),
		parseSource(t, "engine/y.go", `package engine; func New() {}; var _ = New`), // New of another package
		parseSource(t, "engine/review/pgtest/x.go", `package pgtest; import ("os/exec"; "testing")`),
		parseSource(t, "cmd/mcpx-fw/x_test.go", `package main; import "example.com/fw/engine/review/pgtest"`),
		parseSource(t, "cmd/mcpx-fw/render/x_test.go", `package render; import ("go.uber.org/zap"; "example.com/fw/cmd/mcpx-fw/render/rendertest")`),
		parseSource(t, "cmd/mcpx-fw/x_test.go", `package main; import "example.com/fw/relay/peer"`),
		parseSource(t, "cmd/mcpx-fw/x_test.go", `package main; import "example.com/fw/relay/sandbox/sandboxtest"`),
		parseSource(t, "relay/peer/x.go", `package peer; import ("example.com/fw/relay/demopeer"; "example.com/fw/engine/review")`),
		parseSource(t, "relay/demopeer/x.go", `package demopeer; import ("context"; "github.com/modelcontextprotocol/go-sdk/mcp")`),
		parseSource(t, "engine/review/x_test.go", `package review; import "example.com/fw/engine/review/pgtest"`),
		parseSource(t, "relay/internal/refusal/x.go", `package refusal; import ("github.com/modelcontextprotocol/go-sdk/jsonrpc"; "example.com/fw/engine"); var e = &jsonrpc.Error{}`),
		parseSource(t, "relay/peer/x.go", `package peer; import "github.com/modelcontextprotocol/go-sdk/jsonrpc"; var e = &jsonrpc.Error{}`),
		parseSource(t, "relay/x_test.go", `package relay; import "github.com/modelcontextprotocol/go-sdk/jsonrpc"; var e = &jsonrpc.Error{}`),
		parseSource(t, "relay/x.go", `package relay; type Error struct{}; var e = Error{}`),
		parseSource(t, "relay/internal/pipeline/x.go", `package pipeline; import ("example.com/fw/relay/internal/refusal"; "example.com/fw/relayx")`),
	}
	for _, r := range layerRules {
		if got := applyRule(r, mod, clean); len(got) > 0 {
			t.Errorf("%s flagged allowed code: %q", r.name, got)
		}
	}
}

func ruleNamed(t *testing.T, name string) layerRule {
	t.Helper()
	for _, r := range layerRules {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no rule %s", name)
	return layerRule{}
}

// applyRule checks every file against one rule.
func applyRule(r layerRule, module string, files []goFile) []string {
	var out []string
	for _, f := range files {
		for _, v := range r.check(module, f) {
			out = append(out, fmt.Sprintf("%s: %s (%s)", v, r.name, r.text))
		}
	}
	return out
}

// forbidImports builds a check that flags each import bad reports.
func forbidImports(bad func(module string, f goFile, imp string) bool) func(string, goFile) []string {
	return func(module string, f goFile) []string {
		var out []string
		for _, spec := range f.ast.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err == nil && bad(module, f, imp) {
				out = append(out, fmt.Sprintf("%s: imports %q", f.fset.Position(spec.Pos()), imp))
			}
		}
		return out
	}
}

// forbidZapBuilders flags uses of zapBuilders outside cmd/ and tests,
// whatever name zap was imported under.
func forbidZapBuilders(_ string, f goFile) []string {
	if f.test || under(f.dir, "cmd") {
		return nil
	}
	names := map[string]bool{}
	for _, spec := range f.ast.Imports {
		if imp, _ := strconv.Unquote(spec.Path.Value); imp == zapPath {
			name := "zap"
			if spec.Name != nil {
				name = spec.Name.Name
			}
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	var out []string
	ast.Inspect(f.ast, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] && zapBuilders[sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: calls zap.%s (import %q)", f.fset.Position(sel.Pos()), sel.Sel.Name, zapPath))
		}
		return true
	})
	return out
}

// isInternal reports whether dir is an internal/ folder or below one.
func isInternal(dir string) bool {
	return slices.Contains(strings.Split(dir, "/"), "internal")
}

// forbidErrorLiterals flags each jsonrpc.Error composite literal, whatever
// name the SDK's jsonrpc package was imported under, outside the package
// that holds the vocabulary, the test peers and tests.
func forbidErrorLiterals(_ string, f goFile) []string {
	if f.test || under(f.dir, "relay/internal/refusal") || under(f.dir, "relay/peer") || under(f.dir, "relay/demopeer") {
		return nil
	}
	names := importNames(f, sdkPath+"/jsonrpc", "jsonrpc")
	var out []string
	ast.Inspect(f.ast, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
			if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] {
				out = append(out, fmt.Sprintf("%s: builds a jsonrpc.Error literal", f.fset.Position(lit.Pos())))
			}
		}
		return true
	})
	return out
}

// importNames is the set of names f imports path under (name when the
// import is not renamed).
func importNames(f goFile, path, name string) map[string]bool {
	names := map[string]bool{}
	for _, spec := range f.ast.Imports {
		if imp, _ := strconv.Unquote(spec.Path.Value); imp == path {
			n := name
			if spec.Name != nil {
				n = spec.Name.Name
			}
			names[n] = true
		}
	}
	return names
}

// parseTree parses every .go file under root, skipping what the go tool
// skips (testdata, vendor, and names starting with "." or "_") and
// node_modules.
func parseTree(t *testing.T, root string) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, parseSource(t, filepath.ToSlash(rel), string(src)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parseSource parses one file as if it were at path in the module.
func parseSource(t *testing.T, p, src string) goFile {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", p, err)
	}
	return goFile{path: p, dir: path.Dir(p), test: strings.HasSuffix(p, "_test.go"), ast: f, fset: fset}
}

// modulePath reads the module line of go.mod.
func modulePath(t *testing.T, gomod string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatalf("%s has no module line", gomod)
	return ""
}

// under reports whether dir is folder or inside it.
func under(dir, folder string) bool {
	return dir == folder || strings.HasPrefix(dir, folder+"/")
}

// hasPathPrefix reports whether imp is the import path prefix or below it.
func hasPathPrefix(imp, prefix string) bool {
	return imp == prefix || strings.HasPrefix(imp, prefix+"/")
}

// isStdlib reports whether imp is a standard-library path: its first
// element has no dot (as the go tool decides).
func isStdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}
