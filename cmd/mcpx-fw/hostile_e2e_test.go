package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/render/rendertest"
	"github.com/mcpx-fw/mcpx-fw/relay/peer"
	"github.com/mcpx-fw/mcpx-fw/validate"
)

// hostileCase is one file of testdata/requests/hostile (see its README): a
// sampling request an attacking upstream sends, and what the firewall must
// make of it.
type hostileCase struct {
	name        string
	About       string               `json:"about"`
	Category    string               `json:"category"`
	Era         string               `json:"era"`
	Eras        []string             `json:"eras"`
	Caps        hostileCaps          `json:"caps"`
	ResultExtra string               `json:"result_extra"`
	WantCode    *int64               `json:"want_code"`
	WantRules   []string             `json:"want_rules"`
	RawRules    *[]string            `json:"raw_rules"`
	WantOutcome string               `json:"want_outcome"`
	WantReasons []string             `json:"want_reasons"`
	Gap         string               `json:"gap"`
	KnownIssue  string               `json:"known_issue"`
	Generate    map[string]generator `json:"generate"`
	Params      json.RawMessage      `json:"params"`
	ParamsText  *string              `json:"paramsText"`

	raw []byte // the exact bytes sent, generators expanded
}

type hostileCaps struct {
	Tools   bool `json:"tools"`
	Context bool `json:"context"`
}

// generator expands the JSON string "@name" in params into prefix, then
// times copies of the piece (raw text, or bytes in hex) joined by sep,
// then as many copies of close (for nesting), then suffix. "{i}" in a raw
// piece becomes the copy's index.
type generator struct {
	Prefix string  `json:"prefix"`
	Raw    *string `json:"raw"`
	Hex    string  `json:"hex"`
	Times  int     `json:"times"`
	Sep    string  `json:"sep"`
	Close  string  `json:"close"`
	Suffix string  `json:"suffix"`
}

func (g generator) expand(t *testing.T) []byte {
	t.Helper()
	var piece string
	switch {
	case g.Raw != nil:
		piece = *g.Raw
	case g.Hex != "":
		b, err := hex.DecodeString(g.Hex)
		if err != nil {
			t.Fatalf("generator hex %q: %v", g.Hex, err)
		}
		piece = string(b)
	}
	indexed := strings.Contains(piece, "{i}")
	var b bytes.Buffer
	b.Grow(len(g.Prefix) + g.Times*(len(piece)+len(g.Sep)+len(g.Close)) + len(g.Suffix))
	b.WriteString(g.Prefix)
	for i := range g.Times {
		if i > 0 {
			b.WriteString(g.Sep)
		}
		if indexed {
			b.WriteString(strings.ReplaceAll(piece, "{i}", strconv.Itoa(i)))
		} else {
			b.WriteString(piece)
		}
	}
	if g.Close != "" {
		b.WriteString(strings.Repeat(g.Close, g.Times))
	}
	b.WriteString(g.Suffix)
	return b.Bytes()
}

// bytes builds the exact params the upstream sends.
func (c *hostileCase) bytes(t *testing.T) []byte {
	t.Helper()
	raw := []byte(c.Params)
	if c.ParamsText != nil {
		raw = []byte(*c.ParamsText)
	}
	for name, g := range c.Generate {
		placeholder := []byte(strconv.Quote("@" + name))
		if bytes.Count(raw, placeholder) != 1 {
			t.Fatalf("%s: generator %s needs exactly one %s in params", c.name, name, placeholder)
		}
		raw = bytes.Replace(raw, placeholder, g.expand(t), 1)
	}
	return raw
}

// code is the JSON-RPC code the upstream must get; 0 is the completion.
func (c *hostileCase) code() int64 {
	if c.WantCode == nil {
		return 0
	}
	return *c.WantCode
}

func loadHostile(t *testing.T) []*hostileCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoPath(t, "testdata/requests/hostile"), "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no hostile fixtures: %v", err)
	}
	var out []*hostileCase
	only := os.Getenv("MCPXFW_HOSTILE") // a name fragment: run only those fixtures
	for _, p := range paths {
		if only != "" && !strings.Contains(filepath.Base(p), only) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var c hostileCase
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		c.name = strings.TrimSuffix(filepath.Base(p), ".json")
		checkCaseShape(t, &c)
		c.raw = c.bytes(t)
		eras := c.Eras
		if len(eras) == 0 {
			eras = []string{c.Era}
		}
		for _, era := range eras {
			e := c
			e.Era, e.Eras = era, nil
			out = append(out, &e)
		}
	}
	return out
}

// hostileOutcomes are the request-stage outcomes a fixture may expect, as
// the decision log names them.
var hostileOutcomes = []string{"blocker", "pass", "escalate"}

func checkCaseShape(t *testing.T, c *hostileCase) {
	t.Helper()
	switch {
	case strings.TrimSpace(c.About) == "" || strings.Contains(c.About, "\n"):
		t.Fatalf("%s: about must be one line", c.name)
	case c.Category == "":
		t.Fatalf("%s: no category", c.name)
	case c.Era == "" && len(c.Eras) == 0:
		t.Fatalf("%s: no era", c.name)
	case c.WantCode == nil:
		t.Fatalf("%s: no want_code", c.name)
	case (c.Params == nil) == (c.ParamsText == nil):
		t.Fatalf("%s: exactly one of params and paramsText", c.name)
	case c.ResultExtra != "" && (c.Era != "2026-07-28" || len(c.Eras) > 0):
		t.Fatalf("%s: result_extra needs era 2026-07-28 alone: only an input request has a result around it", c.name)
	}
	if !slices.Contains(hostileOutcomes, c.WantOutcome) {
		t.Fatalf("%s: want_outcome %q is not blocker, pass or escalate", c.name, c.WantOutcome)
	}
	switch c.code() {
	case -32602:
		if len(c.WantRules) == 0 || c.WantOutcome != "blocker" || len(c.WantReasons) > 0 {
			t.Fatalf("%s: want_code -32602 needs want_rules, outcome blocker and no want_reasons", c.name)
		}
	case -1:
		if len(c.WantRules) > 0 || c.WantOutcome != "blocker" || len(c.WantReasons) == 0 {
			t.Fatalf("%s: want_code -1 (policy deny) needs want_reasons, outcome blocker and no want_rules", c.name)
		}
	case 0:
		if len(c.WantRules) > 0 || c.WantOutcome == "blocker" {
			t.Fatalf("%s: want_code 0 needs outcome pass or escalate and no want_rules", c.name)
		}
	default:
		t.Fatalf("%s: want_code %d is not -32602, -1 or 0", c.name, c.code())
	}
}

// TestHostileRequests drives every request of testdata/requests/hostile
// through the real firewall as exact bytes, in every era it names (pushed
// up to 2025-11-25, as a 2026-07-28 input request after). Each gets a
// clear answer: -32602 naming its rules, or a policy decision (a deny is
// -1, an escalation is approved here as an operator would, a pass is
// answered). The host is asked only for what passed, and what it is asked
// is what the fixture says, in meaning; serve survives every case.
func TestHostileRequests(t *testing.T) {
	cases := loadHostile(t)
	files := map[string]bool{}
	groups := map[string][]*hostileCase{}
	for _, c := range cases {
		files[c.name] = true
		key := fmt.Sprintf("%s tools=%v context=%v", c.Era, c.Caps.Tools, c.Caps.Context)
		groups[key] = append(groups[key], c)
	}
	if len(files) < 60 && os.Getenv("MCPXFW_HOSTILE") == "" {
		t.Errorf("%d hostile fixtures, want at least 60", len(files))
	}
	for _, c := range cases {
		t.Run("validate/"+c.name+"/"+c.Era, func(t *testing.T) { checkValidator(t, c) })
	}
	for key, group := range groups {
		t.Run("serve/"+key, func(t *testing.T) {
			t.Parallel()
			runHostileGroup(t, group)
		})
	}
}

// checkValidator runs the fixture through validate.Request in process:
// the structural cases break exactly their rules, the others none.
func checkValidator(t *testing.T, c *hostileCase) {
	start := time.Now()
	_, vs := validate.Request(c.raw, validate.Options{Era: c.Era,
		Caps: validate.Capabilities{Tools: c.Caps.Tools, Context: c.Caps.Context}})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("%s (%s): validating %d bytes took %v", c.name, c.Era, len(c.raw), took)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Rule)
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := c.WantRules
	if c.RawRules != nil {
		want = *c.RawRules
	}
	if want = slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
		t.Errorf("%s (%s): validate.Request emits %v, want %v", c.name, c.Era, got, want)
	}
}

// hostileHost starts serve for one group with the shipped policies and a
// max_tokens cap of 4096 on the peer, and returns the host and the config.
func hostileHost(t *testing.T, c *hostileCase) (*peer.Host, string) {
	cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 4096))
	h, err := peer.StartHost(t.Context(), peer.HostOptions{Command: []string{binary, "serve", "--config", cfg},
		Answer: answerWith(hostAnswer), Tools: c.Caps.Tools, Context: c.Caps.Context, ProtocolVersion: c.Era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h, cfg
}

func runHostileGroup(t *testing.T, group []*hostileCase) {
	host, cfg := hostileHost(t, group[0])
	log := decisionLog{path: filepath.Join(filepath.Dir(cfg), "decisions.jsonl")}
	for _, c := range group {
		start := time.Now()
		runHostile(t, host, cfg, &log, c)
		t.Logf("%-48s %-10s %6d bytes %v", c.name, c.Era, len(c.raw), time.Since(start).Round(time.Millisecond))
	}
	// serve is still up and answering after the whole group.
	if res, err := host.CallTool(t.Context(), "echo", map[string]any{"text": "still here"}); err != nil || res.Text != "still here" {
		t.Errorf("serve after the hostile group: %+v, %v", res, err)
	}
	serveLog, _ := os.ReadFile(filepath.Join(filepath.Dir(cfg), "serve.log"))
	if bytes.Contains(serveLog, []byte("panic")) {
		t.Errorf("serve logged a panic:\n%s", serveLog)
	}
}

func runHostile(t *testing.T, host *peer.Host, cfg string, log *decisionLog, c *hostileCase) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.WantOutcome == "escalate" {
			reviewAndApprove(t, cfg, c.name)
		}
	}()
	var got *peer.SampleOutcome
	var err error
	if c.ResultExtra != "" {
		got, err = sampleInputWithExtra(t, host, c.raw, c.ResultExtra)
	} else {
		got, err = sampleRaw(t, host, requestFixture{name: c.name, Era: c.Era, Params: c.raw})
	}
	<-done
	if err != nil {
		t.Errorf("%s (%s): %v", c.name, c.Era, err)
		return
	}
	var asked []json.RawMessage
	for len(host.Asked) > 0 {
		asked = append(asked, <-host.Asked)
	}
	label := fmt.Sprintf("%s (%s)", c.name, c.Era)
	if c.KnownIssue != "" {
		t.Logf("%s: records a known issue: %s", label, c.KnownIssue)
	}
	switch code := c.code(); code {
	case -32602:
		checkViolation(t, requestFixture{name: c.name, Era: c.Era, Want: c.WantRules}, got)
		_, vs := validate.Request(c.raw, validate.Options{Era: c.Era,
			Caps: validate.Capabilities{Tools: c.Caps.Tools, Context: c.Caps.Context}})
		if got.Error != nil && len(vs) > 0 && got.Error.Message != validate.Title(vs[0].Rule) {
			t.Errorf("%s: message %q, want the title of the first violation %q", label, got.Error.Message, validate.Title(vs[0].Rule))
		}
	case 0:
		if got.Error != nil {
			t.Errorf("%s: upstream got error %d %q, want the completion", label, got.Error.Code, got.Error.Message)
		}
	default:
		if got.Error == nil || got.Error.Code != code {
			t.Errorf("%s: upstream got %+v, want code %d", label, got.Error, code)
		}
	}
	wireID := ""
	if got.Error != nil {
		wireID = checkErrorData(t, label, got.Error)
	}
	checkDecision(t, label, c, log.next(t), wireID)
	if c.code() != 0 {
		if len(asked) != 0 {
			t.Errorf("%s: the host was asked %d time(s) for a refused request", label, len(asked))
		}
		return
	}
	if len(asked) != 1 {
		t.Errorf("%s: the host was asked %d times, want once", label, len(asked))
		return
	}
	if !sameMeaning(t, c.raw, asked[0]) {
		t.Errorf("%s: the host was asked something else than what was validated:\nsent:  %.400s\nasked: %.400s", label, c.raw, asked[0])
	}
}

// reviewAndApprove acts on the next escalation as an operator would: it
// reads it with review show (as text, as JSON and as the edit document),
// whose output must carry nothing a terminal could obey or a reader could
// not see (see rendertest.Obeyable: escape sequences, tabs, direction overrides,
// zero-width spaces, invalid UTF-8, piles of combining marks), and whose
// text must not let the upstream's text pass for show's own rows on a
// terminal (see forgedRows), then approves it.
func reviewAndApprove(t *testing.T, cfg, name string) {
	id := waitPending(t, cfg)
	forms := []struct {
		args  []string
		width int // the terminal the text is laid out for; 0 for the other forms
	}{{nil, render.DefaultWidth}, {[]string{"--width", "80"}, 80}, {[]string{"--json"}, 0}, {[]string{"--edit-doc"}, 0}}
	for _, form := range forms {
		show := runCLI(t, append([]string{"review", "show", id, "--config", cfg}, form.args...)...)
		if show.code != 0 {
			t.Errorf("%s: review show %s %s: exit %d: %s", name, id, form.args, show.code, show.stderr)
		}
		if bad := rendertest.Obeyable(show.stdout); bad != "" {
			t.Errorf("%s: review show %s prints %s as it is", name, form.args, bad)
		}
		if form.width == 0 {
			continue
		}
		if bad := forgedRows(show.stdout, id, form.width); bad != "" {
			t.Errorf("%s: review show %s on a terminal %d columns wide: %s", name, form.args, form.width, bad)
		}
	}
	if res := runCLI(t, "review", "approve", id, "--config", cfg); res.code != 0 {
		t.Errorf("%s: review approve %s: exit %d: %s", name, id, res.code, res.stderr)
	}
}

// showHeads are the words show starts its own sections with; a pending
// request-stage review has each exactly once.
var showHeads = []string{"Review ", "Why it needs review:", "Messages (", "To decide"}

// forgedRows returns how show's text output, seen on a terminal width
// columns wide (the width it was laid out for), lets text pass for show's
// own rows, or "": a line wider than the terminal (which would wrap it
// itself and start a row with whatever came next, unmarked) unless it is
// one of show's commands for id (printed whole to be copied; a long
// --config path makes them long), a row that starts after its indentation
// with one of showHeads when show wrote another, or a row that reads as a
// command to act on a review other than id.
func forgedRows(out, id string, width int) string {
	for i, l := range strings.Split(out, "\n") {
		if n := rendertest.TermColumns(l, false); n > width && !commandFor(l, id) {
			return fmt.Sprintf("line %d is %d columns wide: %.200q", i+1, n, l)
		}
	}
	counts := map[string]int{}
	for _, row := range rendertest.TermRows(out, width) {
		row = strings.TrimLeft(row, " ")
		for _, head := range showHeads {
			if strings.HasPrefix(row, head) {
				counts[head]++
			}
		}
		if strings.HasPrefix(row, "mcpx-fw review ") && !commandFor(row, id) {
			return fmt.Sprintf("a row reads as a command for another review: %.200q", row)
		}
	}
	for _, head := range showHeads {
		if counts[head] != 1 {
			return fmt.Sprintf("%d rows start with %q, want 1", counts[head], head)
		}
	}
	return ""
}

// commandFor reports whether line is a review command naming id.
func commandFor(line, id string) bool {
	f := strings.Fields(line)
	return len(f) >= 4 && f[0] == "mcpx-fw" && f[1] == "review" && f[3] == id
}

// sampleInputWithExtra is Host.SampleInputRaw with members added to the
// upstream's input_required result, as written (sample_input_raw's
// result_extra).
func sampleInputWithExtra(t *testing.T, host *peer.Host, raw []byte, extra string) (*peer.SampleOutcome, error) {
	res, err := host.CallTool(t.Context(), "sample_input_raw",
		map[string]any{"raw_b64": base64.StdEncoding.EncodeToString(raw), "result_extra": extra})
	var pe *peer.Error
	if errors.As(err, &pe) {
		return &peer.SampleOutcome{Error: pe}, nil
	}
	if err != nil {
		return nil, err
	}
	var got peer.InputOutcome
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil || len(got.Completions) == 0 {
		return nil, fmt.Errorf("sample_input_raw result %q: %v", res.Text, err)
	}
	return &peer.SampleOutcome{Completion: got.Completions[0]}, nil
}

// checkErrorData: the only detail an upstream gets is a decision id and
// reason codes, under a short fixed message. It returns the decision id.
func checkErrorData(t *testing.T, label string, e *peer.Error) string {
	var data struct {
		DecisionID  string   `json:"decision_id"`
		ReasonCodes []string `json:"reason_codes"`
	}
	dec := json.NewDecoder(bytes.NewReader(e.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&data); err != nil || !strings.HasPrefix(data.DecisionID, "dc-") || data.ReasonCodes == nil {
		t.Errorf("%s: error %d %.300q with data %.300s, want exactly decision_id and reason_codes", label, e.Code, e.Message, e.Data)
	}
	if len(e.Message) > 120 {
		t.Errorf("%s: error message is %d bytes long: %.120q…", label, len(e.Message), e.Message)
	}
	return data.DecisionID
}

// decisionEntry is the part of one decision log line the test reads.
type decisionEntry struct {
	DecisionID string `json:"decision_id"`
	Labels     struct {
		Stage string `json:"stage"`
	} `json:"labels"`
	Result struct {
		Outcome string `json:"outcome"`
		Reasons []struct {
			Code string `json:"code"`
		} `json:"reasons"`
		Violations []struct {
			Rule string `json:"rule"`
		} `json:"violations"`
	} `json:"result"`
}

// decisionLog reads serve's decision log as it grows.
type decisionLog struct {
	path string
	read int
}

// next returns the entries written since the last call.
func (d *decisionLog) next(t *testing.T) []decisionEntry {
	t.Helper()
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := b[d.read:]
	d.read = len(b)
	var out []decisionEntry
	sc := bufio.NewScanner(bytes.NewReader(fresh))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e decisionEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decision log line %.200s: %v", sc.Bytes(), err)
		}
		out = append(out, e)
	}
	return out
}

// checkDecision finds the first request-stage decision the case caused
// (the one the upstream's error names, when it got one) and compares its
// outcome and reasons with the fixture.
func checkDecision(t *testing.T, label string, c *hostileCase, entries []decisionEntry, wireID string) {
	t.Helper()
	for _, e := range entries {
		if e.Labels.Stage != "request" || wireID != "" && e.DecisionID != wireID {
			continue
		}
		if e.Result.Outcome != c.WantOutcome {
			t.Errorf("%s: decision %s outcome %q, want %q", label, e.DecisionID, e.Result.Outcome, c.WantOutcome)
		}
		var codes []string
		for _, r := range e.Result.Reasons {
			codes = append(codes, r.Code)
		}
		var rules []string
		for _, v := range e.Result.Violations {
			rules = append(rules, v.Rule)
		}
		switch {
		case c.code() == -32602:
			for _, r := range c.WantRules {
				if !slices.Contains(rules, r) {
					t.Errorf("%s: decision violations %v lack %s", label, rules, r)
				}
			}
		case !slices.Equal(sortedUnique(codes), sortedUnique(c.WantReasons)):
			t.Errorf("%s: decision reasons %v, want %v", label, codes, c.WantReasons)
		}
		return
	}
	t.Errorf("%s: no request-stage decision %s was logged (%d entries)", label, wireID, len(entries))
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// sameMeaning reports whether the params the host was asked mean what the
// upstream sent: the same JSON once decoded, numbers compared as the
// float64 every MCP SDK reads them into, a message's content array of one
// block the same as that block (the spec's two spellings of one content),
// and the upstream's own params _meta left out (it describes the
// upstream's hop and never crosses).
func sameMeaning(t *testing.T, sent, asked []byte) bool {
	t.Helper()
	var a, b map[string]any
	if err := json.Unmarshal(sent, &a); err != nil {
		t.Fatalf("sent params: %v", err)
	}
	if err := json.Unmarshal(asked, &b); err != nil {
		t.Fatalf("asked params: %v", err)
	}
	delete(a, "_meta")
	for _, doc := range []map[string]any{a, b} {
		msgs, _ := doc["messages"].([]any)
		for _, m := range msgs {
			if msg, ok := m.(map[string]any); ok {
				if list, ok := msg["content"].([]any); ok && len(list) == 1 {
					msg["content"] = list[0]
				}
			}
		}
	}
	return reflect.DeepEqual(normalizeNumbers(a), normalizeNumbers(b))
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case float64:
		if x == 0 {
			return math.Copysign(0, 1)
		}
	}
	return v
}
