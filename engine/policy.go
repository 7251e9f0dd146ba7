package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
)

// DefaultPolicyTimeout bounds one evaluation when PolicyConfig.Timeout is
// zero. Shipped policies decide in well under a millisecond; a policy that
// needs a second is broken, and the request fails closed.
const DefaultPolicyTimeout = time.Second

// PolicyConfig says where the Rego policy lives and what it may see.
type PolicyConfig struct {
	// Dir is the policy directory, e.g. "policies". Every .rego, .json and
	// .yaml file under it is loaded except *_test.rego, hidden files,
	// capabilities.json and schemas/.
	Dir string
	// FS, when Dir is empty, holds the policy instead, laid out as a
	// directory would be: the shipped set embedded in the binary
	// (policies.FS). It is read once; nothing watches it. With neither,
	// loading fails.
	FS fs.FS
	// Timeout bounds one evaluation (default DefaultPolicyTimeout when 0).
	Timeout time.Duration
	// Data becomes data.mcpxfw.config (default: absent, and the shipped
	// policies then treat every server as unknown and default to review).
	Data map[string]any
	// Bundle, when set, is where the policy comes from instead of Dir: an
	// OPA bundle service, polled, with the last good bundle kept in the
	// state dir (see bundlepolicy.go). Dir is then neither read nor watched.
	Bundle *policybundle.Config
}

// Policy is a loaded, compiled policy with its one query prepared. It is
// immutable and safe for concurrent use; reloading makes a new Policy, which
// the caller swaps in whole.
type Policy struct {
	query    rego.PreparedEvalQuery
	timeout  time.Duration
	revision string
	// reasons prepares the query MisshapenReasons runs (reasonsPreparer).
	reasons func(context.Context) (rego.PreparedEvalQuery, error)
}

// LoadPolicy loads and strictly compiles the policy in cfg.Dir and prepares
// the query data.mcpxfw.decision. Any problem is an error naming the file
// and line where there is one, so a broken policy stops start-up instead of
// failing requests one by one.
func LoadPolicy(ctx context.Context, cfg PolicyConfig) (*Policy, error) {
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("policy timeout %s is negative", cfg.Timeout)
	}
	src := sourceOf(cfg)
	files, err := src.load(false, nil)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	p := &Policy{timeout: cfg.Timeout}
	if p.timeout == 0 {
		p.timeout = DefaultPolicyTimeout
	}
	if p.revision, err = policyRevision(src.root, files); err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	rules, err := dirRules(src)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	if p.query, err = prepareDecision(ctx, cfg, files, rules); err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	p.reasons = reasonsPreparer(cfg, files, rules)
	return p, nil
}

// compileRules are what a policy is compiled under besides its modules
// and data: the builtins it may call and the schema typing its input.
type compileRules struct {
	where   string // the directory or bundle, for messages
	caps    *ast.Capabilities
	schemas *ast.SchemaSet
}

// dirRules are a policy directory's (or the embedded set's)
// capabilities.json and input schema, or this OPA version's builtins and no
// schema where it has none.
func dirRules(src policySource) (compileRules, error) {
	caps, err := policyCapabilities(src)
	if err != nil {
		return compileRules{}, err
	}
	schemas, err := policySchemas(src)
	if err != nil {
		return compileRules{}, err
	}
	return compileRules{where: src.name(), caps: caps, schemas: schemas}, nil
}

// prepareDecision compiles the modules in strict mode inside the network-free
// sandbox (rules.caps, already sandboxed), type-checked against the input
// schema when there is one, and prepares the decision query once. A
// directory and a bundle both come through here.
func prepareDecision(ctx context.Context, cfg PolicyConfig, files *loader.Result, rules compileRules) (rego.PreparedEvalQuery, error) {
	if err := requireDecision(rules.where, files); err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	store, err := policyStore(files.Documents, cfg.Data)
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	opts := append(decisionOptions(files, store, rules.caps), rego.Schemas(rules.schemas))
	query, err := rego.New(opts...).PrepareForEval(ctx)
	if compileErrs, ok := errors.AsType[ast.Errors](err); ok {
		// Drop OPA's "bundle activation failed" wrapper: the file:line
		// messages underneath are what the operator needs.
		return query, compileErrs
	}
	return query, err
}

// decisionOptions are the rego options for the decision query. Builtin
// errors are strict: a rule whose builtin fails must fail the decision, not
// quietly not fire (which, for a deny rule, would fail open).
func decisionOptions(files *loader.Result, store storage.Store, caps *ast.Capabilities) []func(*rego.Rego) {
	opts := []func(*rego.Rego){
		rego.Query(decisionRef.String()),
		rego.Store(store),
		rego.Capabilities(caps),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
	}
	for _, path := range slices.Sorted(maps.Keys(files.Modules)) {
		opts = append(opts, rego.ParsedModule(files.Modules[path].Parsed))
	}
	return opts
}

// Revision is a short hash of the loaded policy files, for the decision log
// and `policy eval`, so every decision names the exact policy that made it.
// A nil policy (a shadow that has not loaded) has none: "".
func (p *Policy) Revision() string {
	if p == nil {
		return ""
	}
	return p.revision
}

// Evaluate decides one input document. Every way the policy can fail to
// decide (error, deadline, undefined, malformed) is an error; the caller
// turns it into OutcomeError, which fails closed and stays distinguishable
// from a deny.
func (p *Policy) Evaluate(ctx context.Context, input map[string]any) (PolicyDecision, error) {
	return p.evaluate(ctx, input, &timings{})
}

// evaluate is Evaluate, noting how long evaluation took. The input is
// handed to OPA as a lazy object, converted to OPA's values only where a
// rule reads it: the shipped rules read facts and a few request fields, so
// the messages themselves are never converted. rego.EvalInput would instead
// copy the whole map through JSON and convert all of it, on every call.
func (p *Policy) evaluate(ctx context.Context, input map[string]any, t *timings) (d PolicyDecision, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return PolicyDecision{}, fmt.Errorf("policy evaluation: %w", err)
	}
	defer func() {
		// A lazy object converts as the policy reads, and panics on a value
		// it cannot convert; that is a policy error, never a crash or a pass.
		if r := recover(); r != nil {
			d, err = PolicyDecision{}, fmt.Errorf("policy input: %v", r)
		}
	}()
	halt, stop := evalCancel(ctx)
	defer stop()
	start := time.Now()
	rs, err := p.query.Eval(ctx, rego.EvalParsedInput(ast.LazyObject(input)), rego.EvalExternalCancel(halt))
	t.eval = time.Since(start)
	if err != nil {
		return PolicyDecision{}, evalError(ctx, p.timeout, err)
	}
	return decodeDecision(rs)
}

// evalCancel stops an evaluation when ctx ends (the timeout, or the
// caller giving up). Left to itself, OPA starts a goroutine per evaluation
// to watch ctx; a callback registered on ctx costs less and stops the
// evaluation just the same. stop unregisters it.
func evalCancel(ctx context.Context) (halt topdown.Cancel, stop func() bool) {
	halt = topdown.NewCancel()
	return halt, context.AfterFunc(ctx, halt.Cancel)
}

// evalError labels an evaluation error; a cancelled evaluation also wraps
// the context's error, so errors.Is(err, context.DeadlineExceeded) holds.
func evalError(ctx context.Context, timeout time.Duration, err error) error {
	if topdown.IsCancel(err) && ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("policy evaluation exceeded %s: %w: %w", timeout, ctx.Err(), err)
		}
		return fmt.Errorf("policy evaluation: %w: %w", ctx.Err(), err)
	}
	return fmt.Errorf("policy evaluation: %w", err)
}
