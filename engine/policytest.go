package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
)

// policyTestTimeout bounds one Rego test, as `opa test` does by default.
const policyTestTimeout = 5 * time.Second

// RunPolicyTests runs the test_* rules under dirs with OPA's own test
// runner and prints the results as `opa test` does (-v when verbose), so an
// operator sees the same thing from `mcpx-fw policy test` and stock
// `opa test`. It compiles with the capabilities LoadPolicy uses (the first
// dir's capabilities.json, minus the network builtins), so a policy that
// reaches for the network fails here as it would in serve. err reports only
// what stopped the tests from running (a parse or compile error); failing
// tests are counted in failed.
func RunPolicyTests(ctx context.Context, dirs []string, w io.Writer, verbose bool) (passed, failed int, err error) {
	if len(dirs) == 0 {
		return 0, 0, errors.New("policy test: no policy directory given")
	}
	caps, err := policyCapabilities(dirs[0])
	if err != nil {
		return 0, 0, fmt.Errorf("policy test: %w", err)
	}
	modules, store, err := tester.LoadWithParserOptions(dirs, policyFilter(true),
		ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true, Capabilities: caps})
	if err != nil {
		return 0, 0, fmt.Errorf("policy test: %w", err)
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return 0, 0, fmt.Errorf("policy test: %w", err)
	}
	defer store.Abort(ctx, txn)
	ch, err := policyTestRunner(ctx, store, txn, caps, verbose).SetModules(modules).RunTests(ctx, txn)
	if err != nil {
		return 0, 0, fmt.Errorf("policy test: %w", err)
	}
	var tally policyTestTally
	err = tester.PrettyReporter{Output: w, Verbose: verbose}.Report(tally.count(ch))
	return tally.passed, tally.failed, err
}

// policyTestRunner is configured as `opa test` configures its runner, with
// mcpx-fw's capabilities.
func policyTestRunner(ctx context.Context, store storage.Store, txn storage.Transaction, caps *ast.Capabilities, verbose bool) *tester.Runner {
	compiler := ast.NewCompiler().
		WithPathConflictsCheck(storage.NonEmpty(ctx, store, txn)).
		WithEnablePrintStatements(true).
		WithCapabilities(caps).
		WithUseTypeCheckAnnotations(true)
	return tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		CapturePrintOutput(true).
		EnableTracing(verbose).
		StackTraces(true).
		SetTimeout(policyTestTimeout).
		SetParallel(runtime.NumCPU())
}

// policyTestTally counts results the way `opa test` reports them: each leaf of a
// table test counts once, and a test that errored counts as failed.
type policyTestTally struct{ passed, failed int }

// count forwards results to the reporter while counting them, keeping only
// the note and failure events of a trace, as `opa test -v` shows.
func (t *policyTestTally) count(in chan *tester.Result) chan *tester.Result {
	out := make(chan *tester.Result)
	go func() {
		defer close(out)
		for r := range in {
			t.add(r)
			r.Trace = lineage.Filter(r.Trace, func(e *topdown.Event) bool {
				return e.Op == topdown.NoteOp || e.Op == topdown.FailOp
			})
			out <- r
		}
	}()
	return out
}

func (t *policyTestTally) add(r *tester.Result) {
	switch {
	case r.Skip:
	case r.Error != nil:
		t.failed++
	case len(r.SubResults) > 0:
		for _, sub := range r.SubResults.Iter {
			t.addLeaf(sub)
		}
	case r.Fail:
		t.failed++
	default:
		t.passed++
	}
}

func (t *policyTestTally) addLeaf(sub *tester.SubResult) {
	switch {
	case len(sub.SubResults) > 0:
	case sub.Fail:
		t.failed++
	default:
		t.passed++
	}
}
