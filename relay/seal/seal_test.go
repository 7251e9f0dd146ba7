package seal

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// sealClock is a fake clock the tests move by hand; safe for concurrent
// reads so the race test can share it.
type sealClock struct {
	mu sync.Mutex
	t  time.Time
}

func newSealClock() *sealClock {
	return &sealClock{t: time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.UTC)}
}

func (c *sealClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *sealClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sealTestKey is a fixed key, so failures reproduce; byte i is i+seed.
func sealTestKey(seed byte) []byte {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(i) + seed
	}
	return key
}

const (
	sealServer = "files"
	// sealMarker stands for upstream data inside the state; no error may
	// quote it.
	sealMarker = "UPSTREAM-SECRET-7f3a"
)

var sealCall = CallDigest("tools/call", "read", json.RawMessage(`{"path":"/etc/hosts"}`))

// sealFixture is a Sealer on a fake clock and one continuation for it.
func sealFixture(t testing.TB) (*Sealer, *sealClock, Continuation) {
	t.Helper()
	clock := newSealClock()
	s := New(sealTestKey(1), clock.now)
	c := Continuation{
		Server:  sealServer,
		Call:    sealCall,
		State:   `{"upstream":"` + sealMarker + `"}`,
		Keys:    []string{"summary", "confirm"},
		Round:   2,
		Bridge:  "br-1",
		Expires: clock.now().Add(5 * time.Minute),
	}
	return s, clock, c
}

func mustSeal(t testing.TB, s *Sealer, c Continuation) string {
	t.Helper()
	state, err := s.Seal(c)
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	return state
}

func TestSealRoundTrip(t *testing.T) {
	s, clock, base := sealFixture(t)
	with := func(f func(*Continuation)) Continuation {
		c := base
		f(&c)
		return c
	}
	tests := []struct {
		name string
		c    Continuation
	}{
		{"full", base},
		{"empty state", with(func(c *Continuation) { c.State = "" })},
		{"arbitrary bytes", with(func(c *Continuation) { c.State = "\x00\xff\xfe\x80 \x1b[31m\r\n\"\\" })},
		{"unicode", with(func(c *Continuation) { c.State = "日本語 🚀 \u2028\u2029 e\u0301" })},
		{"json", with(func(c *Continuation) { c.State = `{"a":[1,2.50,"<>&"],"b":null,  "c":"\u00e9"}` })},
		{"looks sealed", with(func(c *Continuation) { c.State = "eyJhIjoxfQ.c2ln" })},
		{"nil keys", with(func(c *Continuation) { c.Keys = nil })},
		{"empty keys", with(func(c *Continuation) { c.Keys = []string{} })},
		{"unicode keys", with(func(c *Continuation) { c.Keys = []string{"ключ", "", "a.b"} })},
		{"round zero, no bridge", with(func(c *Continuation) { c.Round, c.Bridge = 0, "" })},
		{"other zone", with(func(c *Continuation) {
			c.Expires = clock.now().Add(time.Hour).In(time.FixedZone("X", -7*3600))
		})},
		{"empty server and call", with(func(c *Continuation) { c.Server, c.Call = "", "" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := mustSeal(t, s, tt.c)
			got, err := s.Open(state, tt.c.Server, tt.c.Call)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if !got.Expires.Equal(tt.c.Expires) {
				t.Errorf("Expires = %v, want %v", got.Expires, tt.c.Expires)
			}
			if len(got.Nonce) != 2*sealNonceSize {
				t.Errorf("Nonce = %q, want %d hex digits", got.Nonce, 2*sealNonceSize)
			}
			got.Expires, got.Nonce = tt.c.Expires, ""
			if !reflect.DeepEqual(got, tt.c) {
				t.Errorf("round trip changed the continuation:\n got %#v\nwant %#v", got, tt.c)
			}
		})
	}
}

func TestSealFreshNonce(t *testing.T) {
	s, _, c := sealFixture(t)
	c.Nonce = "caller-chosen"
	a, b := mustSeal(t, s, c), mustSeal(t, s, c)
	if a == b {
		t.Fatal("two seals of one continuation are identical")
	}
	ca, err := s.Open(a, c.Server, c.Call)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := s.Open(b, c.Server, c.Call)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Nonce == "caller-chosen" || ca.Nonce == cb.Nonce {
		t.Errorf("nonces %q and %q: want fresh, distinct ones", ca.Nonce, cb.Nonce)
	}
}

func TestSealRefuses(t *testing.T) {
	s, _, base := sealFixture(t)
	tests := []struct {
		name string
		edit func(*Continuation)
		want string
	}{
		{"no expiry", func(c *Continuation) { c.Expires = time.Time{} }, "Expires"},
		{"invalid UTF-8 server", func(c *Continuation) { c.Server = "a\xffb" }, "UTF-8"},
		{"invalid UTF-8 key", func(c *Continuation) { c.Keys = []string{"ok", "\xc3"} }, "UTF-8"},
		{"too big", func(c *Continuation) { c.State = strings.Repeat("x", maxStateSize) }, "over the"},
		{"year out of range", func(c *Continuation) { c.Expires = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "seal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			state, err := s.Seal(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("seal = %q, %v; want an error containing %q", state, err, tt.want)
			}
		})
	}
}

// sealReplaceAt puts a different base64url character at i.
func sealReplaceAt(s string, i int) string {
	r := byte('A')
	if s[i] == 'A' {
		r = 'B'
	}
	return s[:i] + string(r) + s[i+1:]
}

func TestOpenTampered(t *testing.T) {
	s, _, c := sealFixture(t)
	other := c
	other.Keys = []string{"something-else"}
	otherState := mustSeal(t, s, other)
	op, om, _ := strings.Cut(otherState, ".")
	tests := []struct {
		name   string
		mutate func(p, m string) string
		want   error
	}{
		{"payload first char", func(p, m string) string { return sealReplaceAt(p, 0) + "." + m }, ErrTampered},
		{"payload middle char", func(p, m string) string { return sealReplaceAt(p, len(p)/2) + "." + m }, ErrTampered},
		{"payload truncated by a group", func(p, m string) string { return p[:len(p)/4*4-4] + "." + m }, ErrTampered},
		{"payload extended by a group", func(p, m string) string { return p + "AAAA." + m }, ErrTampered},
		{"mac first char", func(p, m string) string { return p + "." + sealReplaceAt(m, 0) }, ErrTampered},
		{"mac middle char", func(p, m string) string { return p + "." + sealReplaceAt(m, len(m)/2) }, ErrTampered},
		{"mac from another state", func(p, m string) string { return p + "." + om }, ErrTampered},
		{"payload from another state", func(p, m string) string { return op + "." + m }, ErrTampered},
		{"separator removed", func(p, m string) string { return p + m }, ErrMalformed},
		{"separator doubled", func(p, m string) string { return p + ".." + m }, ErrMalformed},
		{"mac truncated by one", func(p, m string) string { return p + "." + m[:len(m)-1] }, ErrMalformed},
		{"mac removed", func(p, m string) string { return p + "." }, ErrMalformed},
		{"payload removed", func(p, m string) string { return "." + m }, ErrMalformed},
		{"truncated to half", func(p, m string) string { return (p + "." + m)[:len(p)/2] }, ErrMalformed},
		{"padding added", func(p, m string) string { return p + "." + m + "=" }, ErrMalformed},
		{"newline inserted", func(p, m string) string { return p[:4] + "\n" + p[4:] + "." + m }, ErrMalformed},
		{"trailing space", func(p, m string) string { return p + "." + m + " " }, ErrMalformed},
		{"standard alphabet", func(p, m string) string { return p + "." + strings.NewReplacer("-", "+", "_", "/").Replace(m) + "+" }, ErrMalformed},
		{"third part", func(p, m string) string { return p + "." + m + "." + m }, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := mustSeal(t, s, c)
			p, m, _ := strings.Cut(state, ".")
			_, err := s.Open(tt.mutate(p, m), c.Server, c.Call)
			if !errors.Is(err, tt.want) {
				t.Fatalf("open = %v, want %v", err, tt.want)
			}
			if _, err := s.Open(state, c.Server, c.Call); err != nil {
				t.Errorf("the untouched state no longer opens: %v", err)
			}
		})
	}
}

func TestOpenOtherKey(t *testing.T) {
	s, clock, c := sealFixture(t)
	foreign := New(sealTestKey(2), clock.now)
	_, err := s.Open(mustSeal(t, foreign, c), c.Server, c.Call)
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("open of a state sealed with another key = %v, want %v", err, ErrTampered)
	}
}

func TestOpenMalformed(t *testing.T) {
	s, _, c := sealFixture(t)
	valid := mustSeal(t, s, c)
	tests := []struct {
		name, state string
	}{
		{"empty", ""},
		{"garbage", "not a state at all"},
		{"binary", "\x00\x01\xff.\xfe"},
		{"just a dot", "."},
		{"json", `{"srv":"files"}`},
		{"oversized", strings.Repeat("A", maxStateSize) + "." + strings.Repeat("A", 43)},
		{"oversized valid prefix", valid + strings.Repeat("A", maxStateSize)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Open(tt.state, c.Server, c.Call)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("open = %v, want %v", err, ErrMalformed)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	tests := []struct {
		name   string
		before func(s *Sealer, clock *sealClock, state string)
		server string
		call   string
		want   error
	}{
		{name: "expired", before: sealAdvance(5*time.Minute + time.Nanosecond), want: ErrExpired},
		{name: "expired beats wrong server", before: sealAdvance(time.Hour), server: "other", want: ErrExpired},
		{name: "wrong server", server: "other", want: ErrWrongServer},
		{name: "wrong server beats wrong call", server: "other", call: "other", want: ErrWrongServer},
		{name: "wrong call", call: CallDigest("tools/call", "read", json.RawMessage(`{"path":"/etc/shadow"}`)), want: ErrWrongCall},
		{name: "replayed", before: sealOpenOnce, want: ErrReplayed},
		{name: "replayed later", before: func(s *Sealer, clock *sealClock, state string) {
			sealOpenOnce(s, clock, state)
			clock.advance(4 * time.Minute)
		}, want: ErrReplayed},
		{name: "at the deadline", before: sealAdvance(5 * time.Minute), want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clock, c := sealFixture(t)
			state := mustSeal(t, s, c)
			if tt.before != nil {
				tt.before(s, clock, state)
			}
			server, call := sealOr(tt.server, c.Server), sealOr(tt.call, c.Call)
			_, err := s.Open(state, server, call)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("open = %v, want %v", err, tt.want)
			}
		})
	}
}

func sealAdvance(d time.Duration) func(*Sealer, *sealClock, string) {
	return func(_ *Sealer, clock *sealClock, _ string) { clock.advance(d) }
}

func sealOpenOnce(s *Sealer, _ *sealClock, state string) {
	if _, err := s.Open(state, sealServer, sealCall); err != nil {
		panic("first open failed: " + err.Error())
	}
}

func sealOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// A refused presentation must not spend the nonce: a host (or an
// attacker racing it) sending the state to the wrong place must not
// destroy the real retry.
func TestOpenRefusalSpendsNothing(t *testing.T) {
	s, _, c := sealFixture(t)
	state := mustSeal(t, s, c)
	if _, err := s.Open(state, "other", c.Call); !errors.Is(err, ErrWrongServer) {
		t.Fatalf("wrong server: %v", err)
	}
	if _, err := s.Open(state, c.Server, "other"); !errors.Is(err, ErrWrongCall) {
		t.Fatalf("wrong call: %v", err)
	}
	if _, err := s.Open(state, c.Server, c.Call); err != nil {
		t.Fatalf("right call after refusals: %v", err)
	}
}

func TestOpenConcurrent(t *testing.T) {
	s, _, c := sealFixture(t)
	state := mustSeal(t, s, c)
	const n = 16
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			_, errs[i] = s.Open(state, c.Server, c.Call)
		})
	}
	start.Done()
	done.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrReplayed):
			t.Errorf("open = %v, want success or %v", err, ErrReplayed)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent opens succeeded, want exactly 1", ok, n)
	}
}

func TestOpenErrorsDoNotEchoState(t *testing.T) {
	s, clock, c := sealFixture(t)
	state := mustSeal(t, s, c)
	p, m, _ := strings.Cut(state, ".")
	payload, _ := stateB64.DecodeString(p)
	attempts := []struct{ state, server, call string }{
		{p + "." + sealReplaceAt(m, 0), c.Server, c.Call},
		{string(payload), c.Server, c.Call},
		{state, "other", c.Call},
		{state, c.Server, "other"},
	}
	clock.advance(time.Hour)
	attempts = append(attempts, struct{ state, server, call string }{state, c.Server, c.Call})
	for _, a := range attempts {
		_, err := s.Open(a.state, a.server, a.call)
		if err == nil {
			t.Fatal("open succeeded")
		}
		for _, secret := range []string{sealMarker, p, m, c.Call, c.Bridge} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes the state", err)
			}
		}
	}
}

func TestSealNoncesPruned(t *testing.T) {
	s, clock, c := sealFixture(t)
	for range 3 {
		if _, err := s.Open(mustSeal(t, s, c), c.Server, c.Call); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.used) != 3 {
		t.Fatalf("%d nonces remembered, want 3", len(s.used))
	}
	clock.advance(5*time.Minute + nonceSweepEvery)
	fresh := c
	fresh.Expires = clock.now().Add(time.Minute)
	if _, err := s.Open(mustSeal(t, s, fresh), c.Server, c.Call); err != nil {
		t.Fatal(err)
	}
	if len(s.used) != 1 {
		t.Fatalf("%d nonces remembered after the others expired, want 1", len(s.used))
	}
}

func TestSealShortKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New accepted a 16-byte key")
		}
	}()
	New(make([]byte, 16), nil)
}

func TestCallDigest(t *testing.T) {
	d := func(method, name, args string) string {
		var raw json.RawMessage
		if args != "<nil>" {
			raw = json.RawMessage(args)
		}
		return CallDigest(method, name, raw)
	}
	same := [][]string{
		{`{}`, `<nil>`, ``, `null`, ` null `, "\n", `{ }`},
		{`{"a":1,"b":[1,2],"c":{"y":true,"x":null}}`, "{\n \"c\": {\"x\": null, \"y\": true},\n \"b\": [1, 2],\n \"a\": 1\n}"},
		{`{"s":"<é>"}`, `{"s":"\u003c\u00e9\u003e"}`},
	}
	for _, group := range same {
		for _, args := range group[1:] {
			if d("tools/call", "t", group[0]) != d("tools/call", "t", args) {
				t.Errorf("digest of %q differs from %q", args, group[0])
			}
		}
	}
	distinct := []struct{ method, name, args string }{
		{"tools/call", "t", `{}`},
		{"prompts/get", "t", `{}`},
		{"tools/call", "u", `{}`},
		{"tools/cal", "lt", `{}`},
		{"tools/call", "t", `[]`},
		{"tools/call", "t", `"{}"`},
		{"tools/call", "t", `{"a":1}`},
		{"tools/call", "t", `{"a":1.0}`},
		{"tools/call", "t", `{"a":"1"}`},
		{"tools/call", "t", `{"n":12345678901234567890}`},
		{"tools/call", "t", `{"n":12345678901234567891}`},
		{"tools/call", "t", `{"a":1} {"b":2}`},
		{"tools/call", "t", `{"a":1`},
		{"tools/call", "t", "{\"s\":\"\xff\"}"},
		{"tools/call", "t", "{\"s\":\"\xfe\"}"},
	}
	seen := map[string]int{}
	for i, c := range distinct {
		got := d(c.method, c.name, c.args)
		if len(got) != 64 || strings.Trim(got, "0123456789abcdef") != "" {
			t.Errorf("digest %q is not 64 hex digits", got)
		}
		if j, dup := seen[got]; dup {
			t.Errorf("%+v and %+v share a digest", distinct[j], c)
		}
		seen[got] = i
		if again := d(c.method, c.name, c.args); again != got {
			t.Errorf("digest of %+v is not stable", c)
		}
	}
}

// sealStateDir is a path LoadKey must create.
func sealStateDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state")
}

func TestLoadSealKeyCreatesAndReuses(t *testing.T) {
	dir := sealStateDir(t)
	key, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != KeySize || bytes.Equal(key, make([]byte, KeySize)) {
		t.Fatalf("key = %x, want %d random bytes", key, KeySize)
	}
	sealAssertMode(t, dir, 0o700)
	sealAssertMode(t, filepath.Join(dir, sealKeyFile), 0o600)
	again, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, again) {
		t.Fatal("second load returned a different key")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("state dir holds %d entries, want only %s", len(entries), sealKeyFile)
	}
}

func sealAssertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s mode %#o, want %#o", path, got, want)
	}
}

func TestLoadSealKeyRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, path string)
		want  []string
	}{
		{"readable by others", sealKeyFileWith(KeySize, 0o644), []string{"chmod 600", "0644"}},
		{"readable by group", sealKeyFileWith(KeySize, 0o640), []string{"chmod 600"}},
		{"short", sealKeyFileWith(16, 0o600), []string{"16 bytes", "remove it"}},
		{"long", sealKeyFileWith(33, 0o600), []string{"33 bytes", "remove it"}},
		{"empty", sealKeyFileWith(0, 0o600), []string{"0 bytes"}},
		{"directory", func(t *testing.T, _, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"not a regular file"}},
		{"dir writable by others", func(t *testing.T, dir, _ string) {
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, []string{"chmod go-w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := sealStateDir(t)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, sealKeyFile)
			tt.setup(t, dir, path)
			key, err := LoadKey(dir)
			if err == nil {
				t.Fatalf("LoadKey = %x, want an error", key)
			}
			for _, w := range append(tt.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// keyFile writes an n-byte key with mode perm (chmod, so the umask does
// not interfere).
func sealKeyFileWith(n int, perm os.FileMode) func(*testing.T, string, string) {
	return func(t *testing.T, _, path string) {
		if err := os.WriteFile(path, bytes.Repeat([]byte{7}, n), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadSealKeyConcurrent(t *testing.T) {
	for range 20 {
		dir := sealStateDir(t)
		const n = 8
		keys, errs := make([][]byte, n), make([]error, n)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range n {
			done.Go(func() {
				start.Wait()
				keys[i], errs[i] = LoadKey(dir)
			})
		}
		start.Done()
		done.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("loader %d: %v", i, errs[i])
			}
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("loaders got different keys: %x and %x", keys[0], keys[i])
			}
		}
	}
}

// FuzzOpen: Open never panics, refuses with one of its sentinels, and
// opens nothing but the exact state that was sealed. The valid state is
// built with a fixed key, clock and nonce so every fuzz worker agrees on
// it; the seed corpus holds it, so the mutator edits a genuine state.
func FuzzOpen(f *testing.F) {
	clock := newSealClock()
	key := sealTestKey(3)
	c := Continuation{
		Server: sealServer, Call: sealCall, State: "up\x00\xffstate", Keys: []string{"k"},
		Round: 1, Expires: clock.now().Add(time.Minute), Nonce: "00112233445566778899aabbccddeeff",
	}
	valid, err := New(key, clock.now).Encode(c)
	if err != nil {
		f.Fatal(err)
	}
	p, m, _ := strings.Cut(valid, ".")
	for _, seed := range []string{valid, p + "." + sealReplaceAt(m, 0), p + m, "", ".", "garbage", valid + "\n"} {
		f.Add(seed)
	}
	sentinels := []error{ErrMalformed, ErrTampered, ErrExpired, ErrWrongServer, ErrWrongCall, ErrReplayed}
	f.Fuzz(func(t *testing.T, state string) {
		got, err := New(key, clock.now).Open(state, sealServer, sealCall)
		switch {
		case err == nil && state != valid:
			t.Fatalf("opened a state that was never sealed: %q → %+v", state, got)
		case err != nil && state == valid:
			t.Fatalf("the genuine state was refused: %v", err)
		case err != nil && !sealIsOneOf(err, sentinels):
			t.Fatalf("open returned an unclassified error: %v", err)
		}
	})
}

func sealIsOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
