package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-fw/mcpx-fw/engine/policybundle/bundletest"
)

// bundleRig is a faultRig whose policy comes from a bundle service: signed
// bundles made by `opa build` from copies of the shipped policies.
type bundleRig struct {
	*faultRig
	key bundletest.Key
	srv *bundletest.Server
}

// newBundleRig serves r1 (the shipped policies, under which peer's plain
// requests pass) and points the rig's config at the service, polled every
// second, verified with the rig's key.
func newBundleRig(t *testing.T) *bundleRig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the opa binary")
	}
	r := &bundleRig{faultRig: newFaultRig(t, 3*time.Second), key: bundletest.NewKey(t)}
	r.srv = bundletest.NewServer(t, bundletest.Build(t, r.policies, r.key, "r1"))
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	bundle := fmt.Sprintf("policy:\n  bundle:\n    url: %s\n    polling: {min_delay: 1s, max_delay: 1s}\n    signing: {public_key: %s}\n",
		r.srv.URL, r.key.Public)
	writeFile(t, r.dir, "mcpx-fw.yaml", strings.Replace(string(b), "policy:\n", bundle, 1))
	return r
}

// closedPeer is r.policies with a policy that denies everything from peer.
func (r *bundleRig) closedPeer(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "closed")
	if err := os.CopyFS(dir, os.DirFS(r.policies)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "servers/peer.rego", "package mcpxfw.servers.peer\n\ndeny contains {\"code\": \"closed\", \"message\": \"closed for maintenance\"} if true\n")
	return dir
}

// decidedBy is the labels.policy_revision of decision id in the decision log.
func (r *bundleRig) decidedBy(t *testing.T, id string) string {
	t.Helper()
	f, err := os.Open(r.decisions)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev struct {
			DecisionID string            `json:"decision_id"`
			Labels     map[string]string `json:"labels"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.DecisionID == id {
			return ev.Labels["policy_revision"]
		}
	}
	t.Fatalf("decision %s is not in the decision log", id)
	return ""
}

const bundleKeepsLine = `"msg":"policy bundle update failed; the previous revision keeps deciding"`

// TestBundleServe drives serve on a bundle service: the first bundle is
// downloaded at start-up; a new revision decides without a restart (and
// the decision log names it); a bundle signed by another key, one that
// does not compile, and the service failing each keep it deciding, with
// one log line each; serve restarted with the service gone decides with
// the persisted revision; and a persisted bundle edited on disk stops
// start-up.
func TestBundleServe(t *testing.T) {
	t.Parallel()
	r := newBundleRig(t)
	h := r.serve(t, answerWith(hostAnswer))
	r.log.wait(t, `"msg":"policy loaded from the bundle service"`, `"revision":"r1"`)
	checkServing(t, h, "peer")

	r.srv.Serve(bundletest.Build(t, r.closedPeer(t), r.key, "r2"))
	r.log.wait(t, `"msg":"policy reloaded"`, `"revision":"r2"`, `"previous":"r1"`)
	got := faultSample(t.Context(), h, "peer", plainRequest)
	checkOutcome(t, got, -1, "denied by policy")
	if rev := r.decidedBy(t, faultDecisionID(t, got)); rev != "r2" {
		t.Errorf("the decision log names revision %q, want r2", rev)
	}

	failures := []struct {
		name   string
		fail   func()
		result string
	}{
		{"signed by another key", func() { r.srv.Serve(bundletest.Build(t, r.policies, bundletest.NewKey(t), "evil")) }, "verify_error"},
		{"does not compile", func() {
			r.srv.Serve(bundletest.Build(t, repoPath(t, "testdata/policies/http-send"), r.key, "net"))
		}, "compile_error"},
		{"service answers 503", func() { r.srv.Fail(http.StatusServiceUnavailable) }, "download_error"},
	}
	for _, f := range failures {
		f.fail()
		line := r.log.wait(t, bundleKeepsLine, `"result":"`+f.result+`"`)
		if !strings.Contains(line, `"revision":"r2"`) {
			t.Errorf("%s: logged %s; want it to name r2, still deciding", f.name, line)
		}
		checkOutcome(t, faultSample(t.Context(), h, "peer", plainRequest), -1, "denied by policy")
		checkServing(t, h, "spare")
	}
	if n := strings.Count(r.log.String(), bundleKeepsLine); n != len(failures) {
		t.Errorf("%d failure lines for %d failures; want one each however many polls failed", n, len(failures))
	}
	_ = h.Close()
	r.srv.Close()

	t.Run("restarted offline", func(t *testing.T) {
		r.log = &faultLog{}
		h := r.serve(t, answerWith(hostAnswer))
		r.log.wait(t, `"msg":"policy loaded from the persisted bundle"`, `"revision":"r2"`)
		checkOutcome(t, faultSample(t.Context(), h, "peer", plainRequest), -1, "denied by policy")
		_ = h.Close()
		res := runCLI(t, "check", "--config", r.cfg)
		if res.code != 0 || !strings.Contains(res.stdout, "policy bundle: "+r.srv.URL+bundletest.Resource+", revision r2, last good kept in "+filepath.Join(r.state, "bundles", "mcpxfw", "bundle.tar.gz")) {
			t.Errorf("check offline: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("persisted bundle edited on disk", func(t *testing.T) {
		path := filepath.Join(r.state, "bundles", "mcpxfw", "bundle.tar.gz")
		// What an intruder with the state dir but not the key can make:
		// a bundle of their own policies, unsigned.
		writeFile(t, filepath.Dir(path), filepath.Base(path), string(bundletest.Build(t, r.policies, bundletest.Key{}, "mine")))
		res := runCLI(t, "serve", "--config", r.cfg)
		if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, "policy.bundle: persisted bundle "+path+" is refused") {
			t.Errorf("serve on an edited persisted bundle: exit %d, %q; want refused in one line naming it", res.code, res.stderr)
		}
	})
}

// TestBundleServeNothingToStartWith: no persisted bundle and a service
// that cannot give one: serve does not start, and says why in one line.
func TestBundleServeNothingToStartWith(t *testing.T) {
	t.Parallel()
	r := newBundleRig(t)
	r.srv.Fail(http.StatusServiceUnavailable)
	res := runCLI(t, "serve", "--config", r.cfg)
	if res.code != 1 || !oneLine(res.stderr) || !strings.Contains(res.stderr, "no bundle persisted") || !strings.Contains(res.stderr, "Service Unavailable") {
		t.Errorf("serve with nothing to start with: exit %d, %q", res.code, res.stderr)
	}
}

// TestBundleCredentialsFromEnvironment: policy.bundle's bearer token and
// headers take ${VAR} from the environment, as decision_log.service's,
// tracing.otlp's and servers.<name>.headers do, so the secret need not be
// in the file; an unset variable stops check, naming the key.
func TestBundleCredentialsFromEnvironment(t *testing.T) {
	t.Setenv("MCPXFW_TEST_BUNDLE_TOKEN", "s3cret")
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct{ token, header string }{
		{"${MCPXFW_TEST_BUNDLE_TOKEN}", "team-${MCPXFW_TEST_BUNDLE_TOKEN}"},
		{"${MCPXFW_TEST_UNSET_VAR}", "sec"},
	} {
		cfg := testConfig(t, repoPath(t, "policies"), time.Minute, peerServer("peer", 0))
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		bundle := fmt.Sprintf("policy:\n  bundle:\n    url: %s\n    headers: {X-Team: %q}\n    credentials: {bearer: {token: %q}}\n",
			srv.URL, tt.header, tt.token)
		writeFile(t, filepath.Dir(cfg), "mcpx-fw.yaml", strings.Replace(string(b), "policy:\n", bundle, 1))
		res := runCLI(t, "check", "--config", cfg)
		if strings.Contains(tt.token, "UNSET") {
			if res.code == 0 || !strings.Contains(res.stderr, "policy.bundle.credentials.bearer.token: ${MCPXFW_TEST_UNSET_VAR} is not set") {
				t.Errorf("check with an unset variable: exit %d, stderr %s", res.code, res.stderr)
			}
			continue
		}
		h := receive(t, got, "the bundle request")
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Team") != "team-s3cret" {
			t.Errorf("the bundle service got Authorization %q, X-Team %q; want the variables read", h.Get("Authorization"), h.Get("X-Team"))
		}
	}
}
