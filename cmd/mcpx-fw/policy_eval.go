package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/engine"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// defaultEvalEra is the protocol version policy eval assumes when neither
// --era nor the file names one.
const defaultEvalEra = "2025-11-25"

// evalFlags are policy eval's options.
type evalFlags struct {
	server, stage, era, kind string
	json                     bool
}

func policyEvalCommand() *cobra.Command {
	var f evalFlags
	c := &cobra.Command{
		Use:   "eval --server NAME [--kind sampling|elicitation|roots] [--stage request|result] [--era E] [--json] FILE",
		Short: "Show how serve would decide a saved request (or request and answer): sampling, elicitation or roots",
		Long: `eval validates and decides a saved request exactly as serve would,
through the same code, with the config's policy, server settings and the
server's current usage from the state dir, and prints the validation
violations, the policy's input document and the verdict with its reasons.
Nothing is recorded, queued or logged.

FILE is the request's params as JSON: sampling's ({"messages": [...],
"maxTokens": ...}), an elicitation's ({"mode": "form", "message": ...,
"requestedSchema": {...}} or {"mode": "url", "message": ..., "url": ...,
"elicitationId": ...}), or a roots result ({"roots": [{"uri": ...}]}, whose
request is {}); or an object with "request" and optionally:
  "result"    the answer, for the result stage: the completion
              (CreateMessageResult), the ElicitResult ({"action": "accept",
              "content": {...}}) or the roots list ({"roots": [...]})
  "kind"      sampling, elicitation or roots (--kind wins)
  "era"       the upstream's protocol version (default ` + defaultEvalEra + `; --era wins)
  "host"      {"protocol", "capabilities"}: the host's declaration (default: a
              host that declared sampling with tools and context, elicitation
              with form and url, and roots); sampling tools and context, and
              elicitation's form and url modes, are allowed only when
              declared, as in serve
  "origin"    {"method", "name", "round"}: the host call it belongs to
  "reported"  the upstream's serverInfo
  "usage"     {"minute": {...}, "hour": {...}}: decide with this usage
              instead of the state dir's (what if the server had used more?)
--stage defaults to result when the file has a result, else request.
--kind defaults to the file's "kind", else what its shape says: a request
with requestedSchema, url, elicitationId or mode, or a result with an
action, is an elicitation; a request of {} or a result with roots is
roots; anything else is sampling. The kind eval used is printed first.

--json prints {"kind", "outcome", "decision_id", "reasons", "violations",
"waived" (the baseline reasons the server's package waived), "input"}, and
"error" when the outcome is error.

Exit status: 0 when the policy decided (permit, review or deny: the verdict
says which), 1 when the verdict is error (the policy could not decide, and
serve refuses such a request) or eval could not run, 2 when it was called
wrongly.`,
		Example: `  mcpx-fw policy eval --server everything request.json
  mcpx-fw policy eval --server github-mcp --stage result --json pair.json
  mcpx-fw policy eval --server everything --kind elicitation form.json
      where form.json is {"mode": "form", "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
  mcpx-fw policy eval --server everything roots.json
      where roots.json is {"roots": [{"uri": "file:///home/me/project"}]}`,
		Args: args(1, "mcpx-fw policy eval --server NAME FILE"),
		RunE: func(c *cobra.Command, a []string) error {
			return policyEval(c, f, a[0])
		},
	}
	c.Flags().StringVar(&f.server, "server", "", "the configured server name the request comes from (required)")
	c.Flags().StringVar(&f.stage, "stage", "", "request or result (default: result when FILE has a result)")
	c.Flags().StringVar(&f.kind, "kind", "", "sampling, elicitation or roots (default: FILE's kind, else inferred from its shape)")
	c.Flags().StringVar(&f.era, "era", "", "the upstream's protocol version (default: FILE's era, else "+defaultEvalEra+")")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON for scripts")
	addWidthFlag(c)
	return c
}

func policyEval(c *cobra.Command, f evalFlags, path string) error {
	if f.server == "" {
		return usageError{fmt.Errorf("--server is required\nTry: mcpx-fw policy eval --server NAME %s", path)}
	}
	scr, err := layoutFor(c)
	if err != nil {
		return err
	}
	file, err := readEvalFile(path)
	if err != nil {
		return err
	}
	kind, err := evalKind(f.kind, file)
	if err != nil {
		return err
	}
	stage, err := evalStage(f.stage, file)
	if err != nil {
		return err
	}
	rt, err := startOperator(c.Context(), configFlag(c))
	if err != nil {
		return err
	}
	defer rt.close()
	s := file.engineRequest(kind, f.server, serverLabel(rt.cfg, f.server), cmp.Or(f.era, file.Era, defaultEvalEra))
	v, input := rt.engine.Preview(c.Context(), stage, s, file.result(), file.Usage)
	if f.json {
		err = writeJSON(c.OutOrStdout(), evalJSON(kind, v, input))
	} else {
		w := scr.Rows(c.OutOrStdout())
		err = errors.Join(printEval(w, rt, f.server, kind, v, input), w.Flush())
	}
	return cmp.Or(err, evalStatus(v))
}

// evalStatus is eval's exit status for a verdict (see policy eval --help):
// an error verdict is a request serve would refuse because the policy
// could not decide, so a script testing a policy must not read it as a
// pass.
func evalStatus(v engine.Verdict) error {
	if v.Outcome != engine.OutcomeError {
		return nil
	}
	return withCode(exitFailure, fmt.Errorf("verdict: error (%s): the policy could not decide, and serve refuses such a request", v.DecisionID))
}

// evalFile is policy eval's FILE in its object form.
type evalFile struct {
	Kind     engine.Kind     `json:"kind"`
	Request  json.RawMessage `json:"request"`
	Result   json.RawMessage `json:"result"`
	Era      string          `json:"era"`
	Host     *engine.Host    `json:"host"`
	Origin   engine.Origin   `json:"origin"`
	Reported map[string]any  `json:"reported"`
	Usage    engine.Usage    `json:"usage"`
}

// readEvalFile reads FILE: bare params, or the object form. Params never
// have a "request" member, so its presence tells the two apart; in the
// object form unknown members are errors, so a typo is not silently
// ignored.
func readEvalFile(path string) (evalFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return evalFile{}, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return evalFile{}, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	if _, ok := probe["roots"]; ok && len(probe) == 1 {
		return evalFile{Kind: engine.KindRoots, Request: json.RawMessage(`{}`), Result: b}, nil
	}
	if _, ok := probe["request"]; !ok {
		return evalFile{Request: b}, nil
	}
	var f evalFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return evalFile{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// result is the completion, nil when the file has none.
func (f evalFile) result() []byte {
	if len(f.Result) == 0 || bytes.Equal(bytes.TrimSpace(f.Result), []byte("null")) {
		return nil
	}
	return f.Result
}

// engineRequest describes the saved request as the relay would: its kind,
// the server as configured, the host as declared, and sampling tools and
// context, and elicitation's modes, allowed exactly when the host declared
// them.
func (f evalFile) engineRequest(kind engine.Kind, server, label, era string) engine.Request {
	host := engine.Host{Era: era, Capabilities: map[string]any{
		"sampling":    map[string]any{"tools": map[string]any{}, "context": map[string]any{}},
		"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
		"roots":       map[string]any{"listChanged": true},
	}}
	if f.Host != nil {
		host = *f.Host
	}
	sampling, _ := host.Capabilities["sampling"].(map[string]any)
	_, tools := sampling["tools"]
	_, context := sampling["context"]
	elicit, declared := host.Capabilities["elicitation"].(map[string]any)
	_, form := elicit["form"]
	_, url := elicit["url"]
	form = form || declared && len(elicit) == 0 // an empty declaration means form mode
	return engine.Request{
		Kind:   kind,
		Server: engine.Server{Name: server, Label: label, Era: era, Reported: f.Reported},
		Host:   host,
		Origin: f.Origin,
		Caps:   validate.Capabilities{Tools: tools, Context: context, Form: form, URL: url},
		Params: f.Request,
	}
}

// evalKind is --kind, else the file's kind, else the kind its shape says
// (see policy eval --help).
func evalKind(flag string, f evalFile) (engine.Kind, error) {
	switch k := engine.Kind(cmp.Or(flag, string(f.Kind))); k {
	case engine.KindSampling, engine.KindElicitation, engine.KindRoots:
		return k, nil
	case "":
		return inferKind(f), nil
	default:
		return "", usageError{fmt.Errorf("--kind %q is none of sampling, elicitation, roots", k)}
	}
}

// inferKind is the kind a file's shape says: elicitation params or
// result, roots' empty request or list, else sampling.
func inferKind(f evalFile) engine.Kind {
	var req, res map[string]json.RawMessage
	reqErr := json.Unmarshal(f.Request, &req)
	_ = json.Unmarshal(f.result(), &res)
	switch {
	case hasAny(req, "requestedSchema", "url", "elicitationId", "mode"), hasAny(res, "action"):
		return engine.KindElicitation
	case reqErr == nil && len(req) == 0, hasAny(res, "roots"):
		return engine.KindRoots
	}
	return engine.KindSampling
}

// evalStage is --stage, or the stage the file implies.
func evalStage(flag string, f evalFile) (engine.Stage, error) {
	switch {
	case flag == "" && f.result() != nil, flag == string(engine.StageResult) && f.result() != nil:
		return engine.StageResult, nil
	case flag == string(engine.StageResult):
		return "", usageError{fmt.Errorf("--stage result needs a file with a \"result\"")}
	case flag == "", flag == string(engine.StageRequest):
		return engine.StageRequest, nil
	}
	return "", usageError{fmt.Errorf("--stage %q is neither request nor result", flag)}
}

// serverLabel is the label serve gives a server: its configured label, or
// its name.
func serverLabel(cfg *config.Config, name string) string {
	if s, ok := cfg.Servers[name]; ok && s.Label != "" {
		return s.Label
	}
	return name
}

// evalOutput is policy eval --json.
type evalOutput struct {
	Kind       engine.Kind          `json:"kind"`
	Outcome    engine.Outcome       `json:"outcome"`
	DecisionID string               `json:"decision_id"`
	Reasons    []engine.Reason      `json:"reasons"`
	Violations []validate.Violation `json:"violations"`
	Waived     []engine.Reason      `json:"waived"`
	Input      map[string]any       `json:"input"`
	Error      string               `json:"error,omitempty"`
}

func evalJSON(kind engine.Kind, v engine.Verdict, input map[string]any) evalOutput {
	out := evalOutput{Kind: kind, Outcome: v.Outcome, DecisionID: v.DecisionID, Reasons: v.Reasons,
		Violations: v.Violations, Waived: v.Waived, Input: input}
	if out.Reasons == nil {
		out.Reasons = []engine.Reason{}
	}
	if out.Violations == nil {
		out.Violations = []validate.Violation{}
	}
	if out.Waived == nil {
		out.Waived = []engine.Reason{}
	}
	if v.Err != nil {
		out.Error = v.Err.Error()
	}
	return out
}

// printEval prints what a person reads: violations, the input document,
// then the verdict and why. Everything the request or the policy wrote
// goes through inert (a violation's path and message, a reason, the
// document itself, the error).
func printEval(w io.Writer, rt *runtime, server string, kind engine.Kind, v engine.Verdict, input map[string]any) error {
	note := ""
	if _, ok := rt.cfg.Servers[server]; !ok {
		note = " (not in the configuration)"
	}
	fmt.Fprintf(w, "kind:       %s\nserver:     %s%s\npolicy:     %s (revision %s)\nstage:      %s\n",
		kind, inert.Line(server), note, inert.Line(rt.engine.PolicyStatus().Location), inert.Word(rt.engine.Revision()), v.Stage)
	fmt.Fprintln(w, "violations:", len(v.Violations))
	for _, vi := range v.Violations {
		fmt.Fprintf(w, "  %s at %s: %s\n", inert.Word(vi.Rule), inert.Line(vi.Path), inert.Line(vi.Message))
	}
	doc, err := json.MarshalIndent(input, "  ", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "input:\n  %s\nverdict:    %s (%s, not recorded)\n", inert.JSON(doc), v.Outcome, inert.Word(v.DecisionID))
	for _, r := range v.Reasons {
		fmt.Fprintf(w, "  %s: %s\n", inert.Word(r.Code), inert.Line(r.Message))
	}
	for _, r := range v.Waived {
		fmt.Fprintf(w, "  waived %s: %s\n", inert.Word(r.Code), inert.Line(r.Message))
	}
	if v.Err != nil {
		printLines(w, "error:      ", v.Err.Error())
	}
	return nil
}

// printLines prints text after label, a line of it per line, the lines
// after the first indented under the first: an error from OPA reads as
// OPA wrote it (a line per problem, its detail indented), not as one line
// of escaped newlines and tabs. Each line is still a field of its own.
func printLines(w io.Writer, label, text string) {
	indent := strings.Repeat(" ", len(label))
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if i > 0 {
			label = indent
		}
		fmt.Fprintln(w, label+inert.Line(expandTabs(line)))
	}
}

// hasAny reports whether m holds any of keys.
func hasAny[V any](m map[string]V, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
