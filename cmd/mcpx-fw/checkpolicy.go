package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/inert"
	"github.com/mcpx-fw/mcpx-fw/engine"
)

// checkSample is a request of one kind, and its answer, that check has
// the policy decide for every server at both stages.
type checkSample struct {
	name            string // as a problem line names it
	kind            engine.Kind
	request, result string
}

// checkSamples are one plain, valid request and answer per kind and
// elicitation mode.
var checkSamples = []checkSample{
	{"sampling", engine.KindSampling,
		`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":100}`,
		`{"role":"assistant","content":{"type":"text","text":"Hello."},"model":"sample-model","stopReason":"endTurn"}`},
	{"elicitation (form)", engine.KindElicitation,
		`{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`,
		`{"action":"accept","content":{"name":"Ada"}}`},
	{"elicitation (url)", engine.KindElicitation,
		`{"mode":"url","message":"Sign in to continue.","url":"https://example.com/sign-in","elicitationId":"sample-1"}`,
		`{"action":"accept"}`},
	{"roots", engine.KindRoots, `{}`, `{"roots":[{"uri":"file:///home/user/project","name":"project"}]}`},
}

// checkPolicy has the policy decide each sample at each stage for every
// server in names, and returns a problem line per rule that gave a reason
// of the wrong shape (each rule and value once, at the first request
// that showed it), and per decision that failed otherwise. What it
// decides is never a problem.
func checkPolicy(ctx context.Context, rt *runtime, names []string) []string {
	var problems []string
	seen := map[string]bool{}
	note := func(key, line string) {
		if !seen[key] {
			seen[key] = true
			problems = append(problems, line)
		}
	}
	for _, name := range names {
		for _, sample := range checkSamples {
			for _, stage := range []engine.Stage{engine.StageRequest, engine.StageResult} {
				decideSample(ctx, rt, name, sample, stage, note)
			}
		}
	}
	return problems
}

// decideSample has the policy decide sample at stage for server name,
// noting each problem under a key that says when two are the same.
func decideSample(ctx context.Context, rt *runtime, name string, sample checkSample, stage engine.Stage, note func(key, line string)) {
	s := evalFile{Request: json.RawMessage(sample.request)}.engineRequest(sample.kind, name, serverLabel(rt.cfg, name), defaultEvalEra)
	var result []byte
	if stage == engine.StageResult {
		result = []byte(sample.result)
	}
	where := fmt.Sprintf("server %s, %s %s", name, sample.name, stage)
	v, bad, err := rt.engine.MisshapenReasons(ctx, stage, s, result)
	if err != nil {
		note(err.Error(), fmt.Sprintf("policy: %s: %s", where, inert.Line(err.Error())))
		return
	}
	for _, m := range bad {
		value := cut(reasonJSON(m.Value), 80)
		note(m.Rule+"\x00"+value, fmt.Sprintf("policy: %s returned %s (%s): %s; a reason must be an object {\"code\": \"…\", \"message\": \"…\"}",
			m.Rule, inert.Line(value), where, m.Err))
	}
	if v.Outcome == engine.OutcomeError && len(bad) == 0 {
		note(fmt.Sprint(v.Err), fmt.Sprintf("policy: %s: the policy could not decide: %s", where, inert.Line(fmt.Sprint(v.Err))))
	}
}

// reasonJSON is a reason a rule gave, as compact JSON.
func reasonJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
