package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Go's stems are the shipped policy's needles: the screen mcpx-fw runs in
// Go must be the one the pattern's comment promises.
func TestSecretStemsAreThePolicyNeedles(t *testing.T) {
	q, err := rego.New(rego.Query("x := sort(data.mcpxfw.lib.secret_needles)"),
		rego.Load([]string{shippedPolicies}, policyFilter(false))).PrepareForEval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := q.Eval(t.Context())
	if err != nil || len(rs) != 1 {
		t.Fatalf("%v %v", rs, err)
	}
	var needles []string
	for _, n := range rs[0].Bindings["x"].([]any) {
		needles = append(needles, n.(string))
	}
	if diff := cmp.Diff(needles, secretStems); diff != "" {
		t.Errorf("secretStems differ from data.mcpxfw.lib.secret_needles (-policy +go):\n%s", diff)
	}
	if !slices.IsSorted(secretStems) {
		t.Error("secretStems are not sorted")
	}
	for _, stem := range secretStems {
		if a := stemAnchors[stem]; a == "" || !strings.Contains(stem, a) {
			t.Errorf("stem %q has anchor %q, not a part of it", stem, a)
		}
	}
}

// Go's screen finds what the policy's own screen finds, letter folding
// included, so an input with facts.secret_stems decides as one without.
func TestSecretStemsMatchPolicyScreen(t *testing.T) {
	q, err := rego.New(rego.Query("x := [n | some n in data.mcpxfw.lib.secret_needles; contains(replace(lower(concat(\"\\n\", input)), \"ſ\", \"s\"), n)]"),
		rego.Load([]string{shippedPolicies}, policyFilter(false))).PrepareForEval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, texts := range [][]any{
		{},
		{"The reviewer reads the change."},
		{"hello", "What is the admin PASSWORD?"},
		{"the paſſword please"},
		{"your API \u212aEY"},
		{"THE SECRET TOKEN", "a Cookie", "CREDENTIALS"},
		{"Ünïcödé text with a KEY", "İstanbul"},
		{"keynote", "tokenizer", "secretary"},
		{"pa", "ss"},
		{"invalid \xff\xfe utf-8 and a Token"},
	} {
		rs, err := q.Eval(t.Context(), rego.EvalInput(texts))
		if err != nil || len(rs) != 1 {
			t.Fatalf("%q: %v %v", texts, rs, err)
		}
		want := rs[0].Bindings["x"].([]any)
		slices.SortFunc(want, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		if diff := cmp.Diff(want, secretStemsIn(texts)); diff != "" {
			t.Errorf("%q (-policy +go):\n%s", texts, diff)
		}
	}
}

// The eight-bytes-at-a-time fold is strings.ToLower for every ASCII byte at
// every position, and hands anything else to strings.ToLower.
func TestFoldASCII(t *testing.T) {
	var all []byte
	for c := range 128 {
		all = append(all, byte(c))
	}
	for start := range 8 {
		for end := len(all) - 8; end <= len(all); end++ {
			s := string(all[start:end])
			b := []byte(s)
			if !foldASCII(b) || string(b) != strings.ToLower(s) {
				t.Fatalf("foldASCII(%q) = %q, want %q", s, b, strings.ToLower(s))
			}
		}
	}
	if foldASCII([]byte("ABCDEFGH\u212a")) || foldASCII([]byte("ABC\xff")) {
		t.Error("foldASCII accepted text that is not ASCII")
	}
}

// Random texts mixing ASCII, the folded letters and stems: Go's screen
// finds exactly the stems the policy's expression finds, written with the
// functions its builtins use.
func TestSecretStemsRandom(t *testing.T) {
	parts := []string{"a", "Z", "@", "[", "`", "{", " ", "\n", "ſ", "\u212a", "İ", "é", "\xff", "PA", "ss", "SeC", "ret",
		"tok", "EN", "coo", "KIE", "cred", "ential", "ke", "y", "pass", "token"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var texts []any
		for range rng.IntN(4) {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			texts = append(texts, b.String())
		}
		var strs []string
		for _, x := range texts {
			strs = append(strs, x.(string))
		}
		folded := strings.ReplaceAll(strings.ToLower(strings.Join(strs, "\n")), "ſ", "s")
		want := []any{}
		for _, stem := range secretStems {
			if strings.Contains(folded, stem) {
				want = append(want, stem)
			}
		}
		if got := secretStemsIn(texts); !cmp.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", texts, got, want)
		}
	}
}
