package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
)

// Misshapen is a reason a deny or review rule gave that is not one: not
// an object with a non-empty string code and a string message. The
// decision that gathers it cannot be decoded, and every request it
// touches fails closed.
type Misshapen struct {
	Rule  string // the rule's full name: data.mcpxfw.servers.github.deny
	Value any    // what it gave, as JSON decodes it
	Err   error  // what is wrong with it (decodeReason's words)
}

// reasonsQuery gathers, with the rule each comes from, every deny and
// review reason the decision draws on (main.rego): the global, baseline
// and default packages' and the server's own.
const reasonsQuery = `shared := [[pkg, kind, r] | some pkg in ["global", "baseline", "default"]; some kind in ["deny", "review"]; some r in data.mcpxfw[pkg][kind]]
own := [[kind, r] | some kind in ["deny", "review"]; some r in data.mcpxfw.servers[input.server.name][kind]]`

// reasonsPreparer prepares reasonsQuery, once and only when asked, on what
// the decision was compiled from: only `mcpx-fw check` asks, so serve
// never compiles it.
func reasonsPreparer(cfg PolicyConfig, files *loader.Result, rules compileRules) func(context.Context) (rego.PreparedEvalQuery, error) {
	var once sync.Once
	var q rego.PreparedEvalQuery
	var err error
	return func(ctx context.Context) (rego.PreparedEvalQuery, error) {
		once.Do(func() {
			var store storage.Store
			if store, err = policyStore(files.Documents, cfg.Data); err != nil {
				return
			}
			opts := append(decisionOptions(files, store, rules.caps), rego.Schemas(rules.schemas), rego.Query(reasonsQuery))
			q, err = rego.New(opts...).PrepareForEval(ctx)
		})
		return q, err
	}
}

// MisshapenReasons previews s at stage (see Preview) and evaluates, on the
// same input, the deny and review rules the decision gathers from; it
// returns the verdict and every reason that is not one, naming its rule.
// An outcome is never a problem here: only a reason of the wrong shape is.
func (e *Engine) MisshapenReasons(ctx context.Context, stage Stage, s Request, result []byte) (Verdict, []Misshapen, error) {
	v, input := e.Preview(ctx, stage, s, result, nil)
	if input == nil {
		return v, nil, nil // refused before the policy ran: nothing of it to see
	}
	p := e.policy.Load()
	q, err := p.reasons(ctx)
	if err != nil {
		return v, nil, fmt.Errorf("policy reasons: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	rs, err := q.Eval(ctx, rego.EvalParsedInput(ast.LazyObject(input)))
	if err != nil {
		return v, nil, evalError(ctx, p.timeout, err)
	}
	if len(rs) != 1 {
		return v, nil, fmt.Errorf("policy reasons: %d results", len(rs))
	}
	return v, misshapen(rs[0].Bindings, s.Server.Name), nil
}

// misshapen checks each reason of the reasonsQuery bindings b.
func misshapen(b rego.Vars, server string) []Misshapen {
	var out []Misshapen
	note := func(rule string, r any) {
		if _, err := decodeReason(r); err != nil {
			out = append(out, Misshapen{Rule: rule, Value: r, Err: err})
		}
	}
	shared, _ := b["shared"].([]any)
	for _, item := range shared {
		t, _ := item.([]any)
		note(fmt.Sprintf("data.mcpxfw.%v.%v", t[0], t[1]), t[2])
	}
	own, _ := b["own"].([]any)
	for _, item := range own {
		t, _ := item.([]any)
		note(fmt.Sprintf("data.mcpxfw.servers.%s.%v", server, t[0]), t[1])
	}
	return out
}
