package engine

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle"
	"github.com/mcpx-fw/mcpx-fw/engine/policybundle/bundletest"
	"github.com/mcpx-fw/mcpx-fw/engine/review"
)

// bundleRig is a bundle service serving signed bundles of the shipped
// policies, and the state dir an engine keeps its last good bundle in.
type bundleRig struct {
	key      bundletest.Key
	srv      *bundletest.Server
	state    string
	r1, r2   []byte // the shipped policies, and with everything frozen
	policies string // a copy of the shipped policies
	dlog     bytes.Buffer
	// tweak, when set, changes the bundle config before start-up.
	tweak func(*policybundle.Config)
}

func newBundleRig(t *testing.T) *bundleRig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the opa binary")
	}
	rig := &bundleRig{key: bundletest.NewKey(t), state: t.TempDir(), policies: copyPolicyDir(t, shippedPolicies)}
	rig.r1 = bundletest.Build(t, rig.policies, rig.key, "r1")
	frozen := copyPolicyDir(t, shippedPolicies)
	writePolicyFile(t, filepath.Join(frozen, "servers", "everything.rego"), frozenEverything)
	rig.r2 = bundletest.Build(t, frozen, rig.key, "r2")
	rig.srv = bundletest.NewServer(t, rig.r1)
	return rig
}

// config is the engine's bundle config: poll every second, verify with
// the rig's key.
func (rig *bundleRig) config() *policybundle.Config {
	return &policybundle.Config{URL: rig.srv.URL, MinDelay: time.Second, MaxDelay: time.Second,
		PublicKeyFile: rig.key.Public, StateDir: rig.state}
}

// engine starts an engine on the bundle service, polling, with its log.
func (rig *bundleRig) engine(t *testing.T) (*Engine, *observer.ObservedLogs) {
	t.Helper()
	e, logs, err := rig.start(t)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := e.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // polling ends before the state dir is removed
	return e, logs
}

func (rig *bundleRig) start(t *testing.T) (*Engine, *observer.ObservedLogs, error) {
	core, logs := observer.New(zap.InfoLevel)
	store, err := review.Open(filepath.Join(t.TempDir(), "queue"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	bcfg := rig.config()
	if rig.tweak != nil {
		rig.tweak(bcfg)
	}
	cfg := Config{Policy: PolicyConfig{Bundle: bcfg, Data: fixtureData(t)}, ReviewTimeout: time.Minute, DecisionLog: &rig.dlog}
	e, err := New(t.Context(), cfg, store, zap.New(core))
	return e, logs, err
}

func (rig *bundleRig) persisted(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rig.state, "bundles", "mcpxfw", "bundle.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// awaitStatus polls PolicyStatus until ok holds (10s at most).
func awaitStatus(t *testing.T, e *Engine, ok func(PolicyStatus) bool) PolicyStatus {
	t.Helper()
	var st PolicyStatus
	waitFor(t, 10*time.Second, "the policy status", func() bool { st = e.PolicyStatus(); return ok(st) })
	return st
}

// awaitReloaded waits for the "policy reloaded" line naming revision: the
// last step of taking a new bundle, after it decides and is persisted.
func awaitReloaded(t *testing.T, logs *observer.ObservedLogs, revision string) {
	t.Helper()
	waitFor(t, 10*time.Second, "a reload to "+revision+" logged", func() bool {
		return logs.FilterMessage("policy reloaded").FilterField(zap.String("revision", revision)).Len() > 0
	})
}

// TestBundleNewRevisionTakesEffect: the first bundle is downloaded at
// start-up and persisted; a new revision on the service decides without
// a restart and replaces the persisted one.
func TestBundleNewRevisionTakesEffect(t *testing.T) {
	rig := newBundleRig(t)
	e, logs := rig.engine(t)
	st := e.PolicyStatus()
	if st.Revision != "r1" || st.Source != SourceBundle || st.Location != rig.srv.URL+bundletest.Resource {
		t.Fatalf("at start-up: %+v", st)
	}
	if got := decideCodes(t, e, "everything"); got != "pass " {
		t.Fatalf("r1 decides %s", got)
	}
	if !bytes.Equal(rig.persisted(t), rig.r1) {
		t.Fatal("r1 is not the persisted bundle")
	}
	start := time.Now()
	rig.srv.Serve(rig.r2)
	awaitStatus(t, e, func(st PolicyStatus) bool { return st.Revision == "r2" })
	t.Logf("r2 decides %v after the service has it (polling every 1s)", time.Since(start))
	awaitReloaded(t, logs, "r2")
	if got := decideCodes(t, e, "everything"); got != "blocker frozen" {
		t.Errorf("r2 decides %s", got)
	}
	if !bytes.Equal(rig.persisted(t), rig.r2) {
		t.Error("r2 is not the persisted bundle")
	}
	if n := logs.FilterMessage("policy reloaded").FilterField(zap.String("revision", "r2")).Len(); n != 1 {
		t.Errorf("%d reload lines for r2, want 1", n)
	}
	if got := loggedRevisions(t, rig.dlog.Bytes()); strings.Join(got, ",") != "r1,r2" {
		t.Errorf("decision log names revisions %v, want r1 then r2", got)
	}
}

// loggedRevisions are the labels.policy_revision of each decision-log line.
func loggedRevisions(t *testing.T, log []byte) []string {
	t.Helper()
	var revs []string
	for line := range bytes.Lines(log) {
		var ev struct {
			Labels struct {
				Revision string `json:"policy_revision"`
			} `json:"labels"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("decision log line %q: %v", line, err)
		}
		revs = append(revs, ev.Labels.Revision)
	}
	return revs
}

// TestBundleRestartOffline: an engine started with the bundle service
// gone serves the persisted bundle, verified again, at once.
func TestBundleRestartOffline(t *testing.T) {
	rig := newBundleRig(t)
	_, logs := rig.engine(t)
	rig.srv.Serve(rig.r2)
	awaitReloaded(t, logs, "r2")
	rig.srv.Close()

	again, logs := rig.engine(t)
	if again.Revision() != "r2" {
		t.Fatalf("restarted offline at %s, want r2", again.Revision())
	}
	if got := decideCodes(t, again, "everything"); got != "blocker frozen" {
		t.Errorf("r2 decides %s after the restart", got)
	}
	if logs.FilterMessage("policy loaded from the persisted bundle").Len() != 1 {
		t.Error("no start-up line naming the persisted bundle")
	}
	awaitStatus(t, again, func(st PolicyStatus) bool { return st.Reloads[ReloadDownloadError] >= 1 && st.Revision == "r2" })
}

// TestBundleStartupRefusals: start-up fails, naming why, when the
// persisted bundle was altered on disk (or the key changed), and when
// there is none and the service cannot give one.
func TestBundleStartupRefusals(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, rig *bundleRig)
		errHas  []string
	}{
		{"persisted module edited", func(t *testing.T, rig *bundleRig) {
			rig.persist(t, tamper(t, rig.r1, "servers/everything.rego", frozenEverything))
		}, []string{"persisted bundle", "bundle.tar.gz", "digest mismatch"}},
		{"persisted bundle unsigned", func(t *testing.T, rig *bundleRig) {
			rig.persist(t, bundletest.Build(t, rig.policies, bundletest.Key{}, "unsigned"))
		}, []string{"persisted bundle", ".signatures.json"}},
		{"key changed", func(t *testing.T, rig *bundleRig) {
			rig.persist(t, rig.r1)
			rig.key = bundletest.NewKey(t)
		}, []string{"persisted bundle", "verify"}},
		{"none persisted, service down", func(t *testing.T, rig *bundleRig) {
			rig.srv.Fail(http.StatusServiceUnavailable)
		}, []string{"no bundle persisted", "first download", "Service Unavailable"}},
		{"none persisted, first bundle signed by another key", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, rig.policies, bundletest.NewKey(t), "evil"))
		}, []string{"no bundle persisted", "verify"}},
		{"none persisted, first bundle does not compile", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, "../testdata/policies/http-send", rig.key, "net"))
		}, []string{"http.send"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newBundleRig(t)
			tt.prepare(t, rig)
			_, _, err := rig.start(t)
			if err == nil {
				t.Fatal("started")
			}
			for _, want := range tt.errHas {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if strings.Contains(tt.name, "none persisted") {
				if _, err := os.Stat(filepath.Join(rig.state, "bundles", "mcpxfw", "bundle.tar.gz")); err == nil {
					t.Error("a refused bundle was persisted")
				}
			}
		})
	}
}

// persist puts b where the engine keeps its last good bundle.
func (rig *bundleRig) persist(t *testing.T, b []byte) {
	t.Helper()
	writePolicyFile(t, filepath.Join(rig.state, "bundles", "mcpxfw", "bundle.tar.gz"), string(b))
}

// tamper rewrites one file inside a bundle, keeping its signature: what
// someone editing the persisted bundle on disk would produce.
func tamper(t *testing.T, bundle []byte, name, content string) []byte {
	t.Helper()
	found := false
	out := rewriteBundle(t, bundle, func(path string, body []byte) []byte {
		if path == name {
			found = true
			return []byte(content)
		}
		return body
	}, nil)
	if !found {
		t.Fatalf("no %s in the bundle", name)
	}
	return out
}

// rewriteBundle is bundle with each file's body as edit returns it (given
// its tar path without the leading "/"), then files (path, content) added.
func rewriteBundle(t *testing.T, bundle []byte, edit func(path string, body []byte) []byte, files map[string]string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(bundle))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	write := func(h *tar.Header, body []byte) {
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		write(h, edit(strings.TrimPrefix(h.Name, "/"), body))
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		write(&tar.Header{Name: "/" + name, Mode: 0o644, Typeflag: tar.TypeReg}, []byte(files[name]))
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestBundleOfShippedPolicies: `opa build -b policies`, tests and all,
// unsigned and without a revision, decides as the policies directory does;
// its revision is the short sha256 over what it compiled, the test
// modules left out as a directory leaves them out.
func TestBundleOfShippedPolicies(t *testing.T) {
	rig := newBundleRig(t)
	rig.srv.Serve(bundletest.Build(t, shippedPolicies, bundletest.Key{}, ""))
	rig.tweak = func(c *policybundle.Config) { c.PublicKeyFile = "" }
	e, _, err := rig.start(t)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := newTestEngine(t, Config{})
	if e.Revision() != dir.Revision() {
		t.Errorf("bundle revision %s, directory revision %s", e.Revision(), dir.Revision())
	}
	for _, server := range []string{"everything", "github-mcp", "notes"} {
		if b, d := decideCodes(t, e, server), decideCodes(t, dir, server); b != d {
			t.Errorf("%s: the bundle decides %s, the directory %s", server, b, d)
		}
	}
}

// TestBundleSizeLimit: a bundle with a file past size_limit_bytes is
// refused before anything of it is used or kept.
func TestBundleSizeLimit(t *testing.T) {
	rig := newBundleRig(t)
	rig.tweak = func(c *policybundle.Config) { c.SizeLimitBytes = 4096 } // main.rego is larger
	_, _, err := rig.start(t)
	if err == nil || !strings.Contains(err.Error(), "size") {
		t.Fatalf("started with a file past the limit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rig.state, "bundles")); err == nil {
		t.Error("something was persisted")
	}
}

// TestBundleLongPolling: with a service that offers long polling, a new
// revision decides as soon as the service has it, long before the next
// poll (a minute away here) would fetch it.
func TestBundleLongPolling(t *testing.T) {
	rig := newBundleRig(t)
	rig.srv.LongPoll = true
	rig.tweak = func(c *policybundle.Config) {
		c.MinDelay, c.MaxDelay, c.LongPollingTimeout = time.Minute, time.Minute, 30*time.Second
	}
	e, _ := rig.engine(t)
	waitFor(t, 10*time.Second, "the engine to come back for a long poll", func() bool { return rig.srv.Requests() >= 2 })
	start := time.Now()
	rig.srv.Serve(rig.r2)
	awaitStatus(t, e, func(st PolicyStatus) bool { return st.Revision == "r2" })
	t.Logf("r2 decides %v after the service has it (long polling)", time.Since(start))
}

// TestBundleFailureKeepsRevision: whatever goes wrong with a new bundle,
// the deciding revision and the persisted bundle stay, the failure is
// counted by kind, and logged once however many polls fail alike.
func TestBundleFailureKeepsRevision(t *testing.T) {
	other := bundletest.NewKey(t)
	tests := []struct {
		name   string
		break_ func(t *testing.T, rig *bundleRig)
		result string
		errHas string
	}{
		{"signed by another key", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, rig.policies, other, "evil"))
		}, ReloadVerifyError, "verify"},
		{"unsigned", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, rig.policies, bundletest.Key{}, "unsigned"))
		}, ReloadVerifyError, ".signatures.json"},
		{"http.send does not compile", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, "../testdata/policies/http-send", rig.key, "net"))
		}, ReloadCompileError, "http.send"},
		{"no decision", func(t *testing.T, rig *bundleRig) {
			rig.srv.Serve(bundletest.Build(t, "../testdata/policies/no-decision", rig.key, "nodecision"))
		}, ReloadCompileError, "data.mcpxfw.decision"},
		{"service answers 503", func(t *testing.T, rig *bundleRig) { rig.srv.Fail(http.StatusServiceUnavailable) }, ReloadDownloadError, "Service Unavailable"},
		{"service answers 404", func(t *testing.T, rig *bundleRig) { rig.srv.Fail(http.StatusNotFound) }, ReloadDownloadError, "Not Found"},
		{"service gone", func(t *testing.T, rig *bundleRig) { rig.srv.Close() }, ReloadDownloadError, "request failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newBundleRig(t)
			e, logs := rig.engine(t)
			tt.break_(t, rig)
			awaitStatus(t, e, func(st PolicyStatus) bool { return st.Reloads[tt.result] >= 1 })
			// Two more polls: failed again, or (a bundle that does not
			// compile) answered 304 and not compiled again.
			polled := rig.srv.Requests()
			st := awaitStatus(t, e, func(st PolicyStatus) bool { return st.Reloads[tt.result] >= 2 || rig.srv.Requests() >= polled+2 })
			if st.Revision != "r1" || e.Revision() != "r1" || !strings.Contains(st.LastError, tt.errHas) {
				t.Errorf("after the failure: %+v; want r1 deciding and an error naming %q", st, tt.errHas)
			}
			if got := decideCodes(t, e, "everything"); got != "pass " {
				t.Errorf("r1 no longer decides: %s", got)
			}
			if !bytes.Equal(rig.persisted(t), rig.r1) {
				t.Error("the persisted bundle changed")
			}
			lines := logs.FilterMessage("policy bundle update failed; the previous revision keeps deciding")
			if lines.Len() != 1 {
				t.Fatalf("%d failure lines for %d failed polls, want 1", lines.Len(), st.Reloads[tt.result])
			}
			f := lines.All()[0].ContextMap()
			if f["result"] != tt.result || f["revision"] != "r1" || !strings.Contains(f["error"].(string), tt.errHas) {
				t.Errorf("failure logged as %v", f)
			}
		})
	}
}

// TestBundleWholeSizeLimit: size_limit_bytes bounds the whole bundle, not
// only each file in it. OPA's reader holds every file in memory before it
// checks a signature, so a bundle of many files each under the limit (or
// a gzip bomb of them), served by whoever answers at the bundle URL, must
// be refused as a whole: from the service and from the state dir.
func TestBundleWholeSizeLimit(t *testing.T) {
	const limit = 1 << 20 // each file of the shipped policies is smaller
	pad := map[string]string{}
	for _, d := range []string{"a", "b", "c"} {
		pad["pad/"+d+"/data.json"] = `{"x":"` + strings.Repeat("0", limit*2/3) + `"}`
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, rig *bundleRig, big []byte)
	}{
		{"served", func(t *testing.T, rig *bundleRig, big []byte) { rig.srv.Serve(big) }},
		{"persisted", func(t *testing.T, rig *bundleRig, big []byte) {
			rig.persist(t, big)
			rig.srv.Fail(http.StatusServiceUnavailable)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newBundleRig(t)
			rig.tweak = func(c *policybundle.Config) { c.PublicKeyFile, c.SizeLimitBytes = "", limit }
			tt.prepare(t, rig, withFiles(t, bundletest.Build(t, rig.policies, bundletest.Key{}, "big"), pad))
			e, _, err := rig.start(t)
			if err == nil {
				t.Fatalf("started at %s from a bundle of %d bytes past size_limit_bytes %d", e.Revision(), 3*limit*2/3, limit)
			}
			if !strings.Contains(err.Error(), "too large") {
				t.Errorf("error %q does not say the bundle is too large", err)
			}
			if tt.name == "served" {
				if _, err := os.Stat(filepath.Join(rig.state, "bundles")); err == nil {
					t.Error("something was persisted")
				}
			}
		})
	}
}

// withFiles is bundle with files (tar path without the leading "/",
// content) added.
func withFiles(t *testing.T, bundle []byte, files map[string]string) []byte {
	t.Helper()
	return rewriteBundle(t, bundle, func(_ string, body []byte) []byte { return body }, files)
}

// TestBundleURLSecretsNeverShown: the bundle's URL may carry a password
// (user part) or a token (a query parameter of the resource, which OPA
// appends as it is). The location status reports, the service log and a
// failed download's error, all of which reach /status on the ops
// listener, show neither.
func TestBundleURLSecretsNeverShown(t *testing.T) {
	const secret = "s3cret-never-shown"
	rig := newBundleRig(t)
	rig.tweak = func(c *policybundle.Config) {
		c.URL = strings.Replace(c.URL, "http://", "http://ops:"+secret+"@", 1)
		c.Resource = bundletest.Resource + "?token=" + secret
	}
	e, logs := rig.engine(t)
	rig.srv.Close()
	st := awaitStatus(t, e, func(st PolicyStatus) bool { return st.Reloads[ReloadDownloadError] >= 1 })
	if strings.Contains(st.Location, secret) || strings.Contains(st.LastError, secret) {
		t.Errorf("status shows the secret:\nlocation %s\nlast error %s", st.Location, st.LastError)
	}
	if !strings.Contains(st.Location, "token=xxxxx") {
		t.Errorf("status location %s: want the token's parameter named, its value hidden", st.Location)
	}
	for _, l := range logs.All() {
		for k, v := range l.ContextMap() {
			if strings.Contains(fmt.Sprint(v), secret) {
				t.Errorf("log line %q shows the secret in %s: %v", l.Message, k, v)
			}
		}
	}
}

// TestBundleStopIsNoFailure: stopping while a long poll is held cancels
// that download; it is the firewall stopping, not the service failing, so
// no download_error is counted and no failure line logged. Stop returns
// only once polling has ended, so nothing is logged after it either.
func TestBundleStopIsNoFailure(t *testing.T) {
	rig := newBundleRig(t)
	rig.srv.LongPoll = true
	rig.tweak = func(c *policybundle.Config) {
		c.MinDelay, c.MaxDelay, c.LongPollingTimeout = time.Minute, time.Minute, 30*time.Second
	}
	e, logs, err := rig.start(t)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := e.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Start-up's download, then the first poll: a long poll the service holds.
	waitFor(t, 10*time.Second, "the engine to hold a long poll", func() bool { return rig.srv.Requests() >= 2 })
	stop()
	lines := logs.Len()
	if stack := allStacks(); strings.Contains(stack, "download.(*Downloader).loop") {
		t.Errorf("OPA's downloader still runs after stop returned:\n%s", stack)
	}
	if n := e.PolicyStatus().Reloads[ReloadDownloadError]; n != 0 {
		t.Errorf("stopping counted %d download errors", n)
	}
	if n := logs.FilterMessage("policy bundle update failed; the previous revision keeps deciding").Len(); n != 0 {
		t.Errorf("stopping logged %d failure lines: %v", n, logs.All())
	}
	if logs.Len() != lines {
		t.Errorf("lines logged after stop returned: %v", logs.All()[lines:])
	}
}

// allStacks is every goroutine's stack.
func allStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
