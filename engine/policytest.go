package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
)

// policyTestTimeout bounds one Rego test, as `opa test` does by default.
const policyTestTimeout = 5 * time.Second

// PolicyTestOptions are the `opa test` flags `mcpx-fw policy test` offers.
type PolicyTestOptions struct {
	// Verbose lists every test and its notes (opa test -v).
	Verbose bool
	// Coverage prints OPA's JSON coverage report instead of the test list
	// (opa test --coverage).
	Coverage bool
}

// PolicyTestResult counts what ran. Coverage is the percentage of policy
// lines the tests evaluated, when Coverage was asked for.
type PolicyTestResult struct {
	Passed, Failed int
	Coverage       float64
}

// RunPolicyTests runs the test_* rules under dirs with OPA's own test
// runner and prints the results as `opa test` does, so an operator sees the
// same thing from `mcpx-fw policy test` and stock `opa test`. It compiles
// with the capabilities LoadPolicy uses (the first dir's capabilities.json,
// minus the network builtins), so a policy that reaches for the network
// fails here as it would in serve. err reports only what stopped the tests
// from running (a parse or compile error); failing tests are counted.
func RunPolicyTests(ctx context.Context, dirs []string, w io.Writer, opts PolicyTestOptions) (PolicyTestResult, error) {
	if len(dirs) == 0 {
		return PolicyTestResult{}, errors.New("policy test: no policy directory given")
	}
	srcs := make([]policySource, len(dirs))
	for i, dir := range dirs {
		srcs[i] = policySource{root: dir}
	}
	return runPolicyTests(ctx, srcs, w, opts)
}

// RunPolicyTestsFS is RunPolicyTests on a policy laid out in fsys as in a
// directory: the shipped set embedded in the binary.
func RunPolicyTestsFS(ctx context.Context, fsys fs.FS, w io.Writer, opts PolicyTestOptions) (PolicyTestResult, error) {
	return runPolicyTests(ctx, []policySource{{fsys: fsys, root: "."}}, w, opts)
}

func runPolicyTests(ctx context.Context, srcs []policySource, w io.Writer, opts PolicyTestOptions) (PolicyTestResult, error) {
	caps, err := policyCapabilities(srcs[0])
	if err != nil {
		return PolicyTestResult{}, fmt.Errorf("policy test: %w", err)
	}
	modules, store, err := loadPolicyTests(srcs, caps)
	if err != nil {
		return PolicyTestResult{}, fmt.Errorf("policy test: %w", err)
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return PolicyTestResult{}, fmt.Errorf("policy test: %w", err)
	}
	defer store.Abort(ctx, txn)
	var cov *cover.Cover
	runner := policyTestRunner(ctx, store, txn, caps, opts.Verbose)
	if opts.Coverage {
		cov = cover.New()
		runner = runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.SetModules(modules).RunTests(ctx, txn)
	if err != nil {
		return PolicyTestResult{}, fmt.Errorf("policy test: %w", err)
	}
	return reportPolicyTests(ch, w, opts, cov, modules)
}

// loadPolicyTests parses every source's modules, tests included, and
// their data into one store, as `opa test` loads its arguments. The
// sources are all folders, or the one file system.
func loadPolicyTests(srcs []policySource, caps *ast.Capabilities) (map[string]*ast.Module, storage.Store, error) {
	roots := make([]string, len(srcs))
	for i, src := range srcs {
		roots[i] = src.root
	}
	res, err := loadFiles(srcs[0].fsys, roots, true, caps)
	if err != nil {
		return nil, nil, err
	}
	modules := make(map[string]*ast.Module, len(res.Modules))
	for _, m := range res.Modules {
		modules[m.Name] = m.Parsed
	}
	return modules, inmem.NewFromObject(res.Documents), nil
}

// reportPolicyTests prints results with the reporter `opa test` would use
// and counts them. A reporter may stop reading early (the coverage one does
// at the first error), so what it leaves is drained, and counted.
func reportPolicyTests(ch chan *tester.Result, w io.Writer, opts PolicyTestOptions, cov *cover.Cover, modules map[string]*ast.Module) (PolicyTestResult, error) {
	var tally policyTestTally
	counted := tally.count(ch)
	var reporter tester.Reporter = tester.PrettyReporter{Output: w, Verbose: opts.Verbose}
	if cov != nil {
		reporter = tester.JSONCoverageReporter{Cover: cov, Modules: modules, Output: w, Verbose: opts.Verbose}
	}
	err := reporter.Report(counted)
	for range counted {
	}
	res := PolicyTestResult{Passed: tally.passed, Failed: tally.failed}
	if cov != nil {
		res.Coverage = cov.Report(modules).Coverage
	}
	if res.Failed > 0 || cov != nil {
		err = nil // failures are counted; the reporter's error only repeats them
	}
	return res, err
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
