package relay

// Sealed requestState (SPEC-NOTES §4.2, §8).
//
// A 2026-07-28 host must echo requestState exactly, but the spec also says
// the state is attacker-controlled: the host, or anything between it and
// us, can alter it, replay it, keep it past its time, or paste it into a
// call to another server or with other arguments. The firewall decides
// things from the state (which upstream to resume, which input keys were
// asked, which bridged call is parked), so it is sealed: an HMAC binds the
// payload to this firewall's key, the payload binds it to one server, one
// call and a deadline, and a one-time nonce stops replays.

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpx-fw/mcpx-fw/relay/internal/refusal"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

const (
	// sealKeyFile lives in the state dir so the key survives restarts:
	// a host retrying across a restart still gets its call resumed.
	sealKeyFile = "seal.key"
	sealKeySize = 32
	// sealNonceSize is 128 bits: enough that two seals never share one.
	sealNonceSize = 16
	// maxStateSize bounds the work an attacker can make open do; it is
	// checked before anything is decoded.
	maxStateSize = 64 << 10
	// sealDomain separates this MAC from any other use of the same key and
	// names the format version, so a v2 can never be mistaken for a v1.
	sealDomain = "mcpx-fw/requestState/v1\n"
	// nonceSweepEvery spaces out the sweeps of the used-nonce set, so open
	// stays O(1) amortised while the set still shrinks as states expire.
	nonceSweepEvery = time.Minute
)

// stateB64 is strict so that every byte string has exactly one encoding:
// the lax decoder ignores the low bits of the last character, which would
// let a changed state open as if it were the original.
var stateB64 = base64.RawURLEncoding.Strict()

// Reasons open refuses a state. They are wrapped with detail; callers test
// them with errors.Is and turn them into wire errors with rejection.
var (
	errStateMalformed   = errors.New("requestState malformed")
	errStateTampered    = errors.New("requestState tampered")
	errStateExpired     = errors.New("requestState expired")
	errStateWrongServer = errors.New("requestState issued for another server")
	errStateWrongCall   = errors.New("requestState issued for another call")
	errStateReplayed    = errors.New("requestState already used")
)

// stateRejections is the one short phrase the host sees for each reason.
// The detail stays in the error (for the log), never on the wire.
var stateRejections = []struct {
	err    error
	phrase string
}{
	{errStateMalformed, "malformed"},
	{errStateTampered, "tampered"},
	{errStateExpired, "expired"},
	{errStateWrongServer, "issued for another server"},
	{errStateWrongCall, "issued for another call"},
	{errStateReplayed, "already used"},
}

// continuation is what the firewall needs to resume a host call on its retry.
type continuation struct {
	Server string   // the upstream's configured name
	Call   string   // a digest of the host's call (method, name, arguments), see callDigest
	State  string   // the upstream's own requestState, byte for byte (may be empty)
	Keys   []string // the input keys the host was asked to answer
	Round  int      // rounds already taken for this call
	Bridge string   // id of a suspended bridged call, empty if none
	// Replica names the firewall process that holds the bridged call
	// (Proxy.replica); set only with Bridge, since only a bridged call
	// lives in one process's memory.
	Replica string
	Expires time.Time // after this the state is refused
	Nonce   string    // random, 128-bit, set by seal; one-time use
}

// sealedPayload is a continuation as it travels. State is bytes because
// the upstream's state is opaque and JSON strings cannot carry invalid
// UTF-8; encoding/json would silently replace it.
type sealedPayload struct {
	Server  string    `json:"srv"`
	Call    string    `json:"call"`
	State   []byte    `json:"st"`
	Keys    []string  `json:"keys"`
	Round   int       `json:"round"`
	Bridge  string    `json:"br,omitempty"`
	Replica string    `json:"rep,omitempty"`
	Expires time.Time `json:"exp"`
	Nonce   string    `json:"n"`
}

// sealer seals and opens requestStates with one key and remembers which
// nonces were spent, so each sealed state opens at most once.
type sealer struct {
	key []byte
	now func() time.Time

	mu        sync.Mutex
	used      map[string]time.Time // nonce → the state's expiry
	nextSweep time.Time
}

// newSealer returns a sealer for key (at least sealKeySize bytes, see
// LoadSealKey); now nil means time.Now. A shorter key is a programming
// error and panics: a weak key would make every seal forgeable, silently.
func newSealer(key []byte, now func() time.Time) *sealer {
	if len(key) < sealKeySize {
		panic(fmt.Sprintf("relay: seal key is %d bytes, want %d", len(key), sealKeySize))
	}
	if now == nil {
		now = time.Now
	}
	return &sealer{key: bytes.Clone(key), now: now, used: map[string]time.Time{}}
}

// seal gives c a fresh nonce and returns it as an opaque requestState.
// Any Nonce already in c is replaced: only seal may choose one.
func (s *sealer) seal(c continuation) (string, error) {
	state, _, err := s.sealed(c)
	return state, err
}

// sealed is seal, also returning c as sealed, with its nonce: the name of
// the round's row in the store (handedstore.go).
func (s *sealer) sealed(c continuation) (string, continuation, error) {
	nonce := make([]byte, sealNonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return "", continuation{}, fmt.Errorf("seal requestState: %w", err)
	}
	c.Nonce = hex.EncodeToString(nonce)
	state, err := s.encode(c)
	return state, c, err
}

// encode is seal without the nonce: it MACs c exactly as given.
func (s *sealer) encode(c continuation) (string, error) {
	if err := sealable(c); err != nil {
		return "", fmt.Errorf("seal requestState: %w", err)
	}
	payload, err := json.Marshal(sealedPayload{
		Server: c.Server, Call: c.Call, State: []byte(c.State), Keys: c.Keys,
		Round: c.Round, Bridge: c.Bridge, Replica: c.Replica, Expires: c.Expires, Nonce: c.Nonce,
	})
	if err != nil {
		return "", fmt.Errorf("seal requestState: %w", err)
	}
	state := stateB64.EncodeToString(payload) + "." + stateB64.EncodeToString(s.mac(payload))
	if len(state) > maxStateSize {
		return "", fmt.Errorf("seal requestState: sealed state is %d bytes, over the %d open accepts", len(state), maxStateSize)
	}
	return state, nil
}

// sealable refuses what would not come back unchanged or could never be
// forgotten: JSON replaces invalid UTF-8, and a state without an expiry
// would hold its nonce in memory for ever.
func sealable(c continuation) error {
	if c.Expires.IsZero() {
		return errors.New("Expires is not set")
	}
	if c.Nonce == "" {
		return errors.New("Nonce is not set")
	}
	fields := append([]string{c.Server, c.Call, c.Bridge, c.Replica, c.Nonce}, c.Keys...)
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return errors.New("a field other than State is not valid UTF-8")
		}
	}
	return nil
}

// open checks state and returns its continuation, spending its nonce.
// The checks run cheapest and least trusting first: shape and size, then
// the MAC (nothing is parsed as JSON before it is authentic), then expiry,
// binding and replay. A state that fails any check spends nothing, so a
// host that sends it to the wrong call can still use it on the right one.
// Errors never quote the state: it may carry upstream data.
func (s *sealer) open(state, server, call string) (continuation, error) {
	c, err := s.check(state, server, call)
	if err != nil {
		return continuation{}, err
	}
	return c, s.use(c)
}

// check is open without the replay check: the state is authentic,
// unexpired and for this server and call. A round kept in the shared store
// is spent by taking its row (handedstore.go), which every replica sees;
// only rounds kept in this process's memory are spent with use.
func (s *sealer) check(state, server, call string) (continuation, error) {
	payload, err := s.verify(state)
	if err != nil {
		return continuation{}, err
	}
	c, err := decodePayload(payload)
	if err != nil {
		return continuation{}, err
	}
	if err := checkBinding(c, s.now(), server, call); err != nil {
		return continuation{}, err
	}
	return c, nil
}

// use spends c's nonce in this process, or reports that it was spent.
func (s *sealer) use(c continuation) error {
	if !s.spend(c.Nonce, c.Expires, s.now()) {
		return fmt.Errorf("%w: its nonce was spent by an earlier retry", errStateReplayed)
	}
	return nil
}

// serverOf is the server a state the firewall sealed was issued for, read
// without spending it; false for anything that is not such a state.
func (s *sealer) serverOf(state string) (string, bool) {
	payload, err := s.verify(state)
	if err != nil {
		return "", false
	}
	c, err := decodePayload(payload)
	return c.Server, err == nil
}

// verify returns the payload of a well-formed state whose MAC is ours.
func (s *sealer) verify(state string) ([]byte, error) {
	payload, mac, err := splitState(state)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac, s.mac(payload)) {
		return nil, fmt.Errorf("%w: MAC does not match (altered, or sealed with another key)", errStateTampered)
	}
	return payload, nil
}

// splitState decodes "payload.mac". The alphabet is checked by hand
// because the base64 decoder skips CR and LF even when strict.
func splitState(state string) (payload, mac []byte, err error) {
	switch {
	case state == "":
		return nil, nil, fmt.Errorf("%w: empty", errStateMalformed)
	case len(state) > maxStateSize:
		return nil, nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", errStateMalformed, len(state), maxStateSize)
	}
	p, m, ok := strings.Cut(state, ".")
	if !ok || !isBase64URL(p) || !isBase64URL(m) {
		return nil, nil, fmt.Errorf("%w: not two base64url parts joined by one dot", errStateMalformed)
	}
	if payload, err = stateB64.DecodeString(p); err != nil {
		return nil, nil, fmt.Errorf("%w: payload is not canonical base64url", errStateMalformed)
	}
	if mac, err = stateB64.DecodeString(m); err != nil || len(mac) != sha256.Size {
		return nil, nil, fmt.Errorf("%w: MAC is not %d bytes of canonical base64url", errStateMalformed, sha256.Size)
	}
	return payload, mac, nil
}

func isBase64URL(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}

func (s *sealer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(sealDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// decodePayload parses an authentic payload. It fails only if the key
// sealed something that is not a v1 continuation, which is still refused.
func decodePayload(payload []byte) (continuation, error) {
	var p sealedPayload
	if err := json.Unmarshal(payload, &p); err != nil || p.Nonce == "" || p.Expires.IsZero() {
		return continuation{}, fmt.Errorf("%w: authentic but not a continuation", errStateMalformed)
	}
	return continuation{
		Server: p.Server, Call: p.Call, State: string(p.State), Keys: p.Keys,
		Round: p.Round, Bridge: p.Bridge, Replica: p.Replica, Expires: p.Expires, Nonce: p.Nonce,
	}, nil
}

// checkBinding refuses a state past its deadline or presented to another
// server or call than the one it was sealed for.
func checkBinding(c continuation, now time.Time, server, call string) error {
	switch {
	case now.After(c.Expires):
		return fmt.Errorf("%w: deadline passed %s ago", errStateExpired, now.Sub(c.Expires).Round(time.Millisecond))
	case c.Server != server:
		return fmt.Errorf("%w: presented to server %q", errStateWrongServer, server)
	case c.Call != call:
		return fmt.Errorf("%w: the call's method, name or arguments differ", errStateWrongCall)
	}
	return nil
}

// spend marks nonce used until expires and reports whether it was unused.
// Check and mark happen under one lock, so of any number of concurrent
// retries carrying the same state exactly one gets through.
func (s *sealer) spend(nonce string, expires, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if _, spent := s.used[nonce]; spent {
		return false
	}
	s.used[nonce] = expires
	return true
}

// sweep forgets nonces whose states have expired: open refuses those as
// expired before it looks at the nonce, so they need not be remembered.
// The set is thus bounded by the states sealed within one TTL.
func (s *sealer) sweep(now time.Time) {
	if now.Before(s.nextSweep) {
		return
	}
	for nonce, expires := range s.used {
		if now.After(expires) {
			delete(s.used, nonce)
		}
	}
	s.nextSweep = now.Add(nonceSweepEvery)
}

// rejection is the JSON-RPC error for a state open refused: invalid params,
// with one short phrase per reason and none of the error's detail. nil for
// a nil err.
func (s *sealer) rejection(err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	phrase := "invalid"
	for _, r := range stateRejections {
		if errors.Is(err, r.err) {
			phrase = r.phrase
			break
		}
	}
	return refusal.StateRejected(phrase)
}

// callDigest names one host call so a state sealed for it cannot be used
// with another. Arguments are canonicalised (key order, whitespace and
// escapes do not matter; nil, empty and null equal {}), since a host may
// re-encode the same arguments on its retry. Numbers keep their literal
// text: through float64, distinct large integers would collide.
// Arguments that are not one valid JSON value are hashed raw instead, so
// they still never match a different call. Fields are length-prefixed so
// ("a", "bc") and ("ab", "c") differ.
func callDigest(method, name string, arguments json.RawMessage) string {
	h := sha256.New()
	for _, f := range []string{"mcpx-fw/call/v1", method, name, canonicalArguments(arguments)} {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalArguments is "json:" and the re-encoded value, or "raw:" and
// the bytes when they are not exactly one valid JSON value in valid UTF-8
// (the decoder would replace invalid UTF-8, merging distinct inputs).
func canonicalArguments(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "json:{}"
	}
	if !utf8.Valid(raw) {
		return "raw:" + string(raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
		return "raw:" + string(raw)
	}
	if v == nil {
		return "json:{}"
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "raw:" + string(raw)
	}
	return "json:" + string(out)
}

// LoadSealKey returns the requestState key in stateDir, creating it on
// first use. See loadSealKey.
func LoadSealKey(stateDir string) ([]byte, error) { return loadSealKey(stateDir) }

// loadSealKey reads <stateDir>/seal.key, creating stateDir (0700) and the
// key (32 bytes from crypto/rand, 0600) if missing. A key others can read
// or the wrong size is refused, not replaced: replacing it would silently
// void every state already issued, and a readable key lets anyone forge.
func loadSealKey(stateDir string) ([]byte, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir for the seal key: %w", err)
	}
	if err := checkSealDir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, sealKeyFile)
	key, err := readSealKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createSealKey(stateDir, path); err != nil {
		return nil, err
	}
	return readSealKey(path)
}

// checkSealDir refuses a folder holding a seal key (the state dir, or
// seal.key_file's) that others can write: they could swap in a key of
// their own and forge states. Its error names the folder, whichever it is.
func checkSealDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("seal key dir: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("folder %s is writable by group or others (mode %#o), so the seal key in it could be replaced; run: chmod go-w %s",
			dir, perm, dir)
	}
	return nil
}

// readSealKey reads and checks an existing key. A missing file is
// reported as fs.ErrNotExist so the caller can create it.
func readSealKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open seal key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal key %s: %w", path, err)
	}
	if err := checkSealKeyFile(path, fi); err != nil {
		return nil, err
	}
	key := make([]byte, sealKeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read seal key %s: %w", path, err)
	}
	return key, nil
}

// checkSealKeyFile checks the opened file's own mode and size (not the
// path's, which could change in between).
func checkSealKeyFile(path string, fi fs.FileInfo) error {
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("seal key %s is not a regular file; remove it and restart to create a new key", path)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("seal key %s is accessible by group or others (mode %#o); run: chmod 600 %s",
			path, fi.Mode().Perm(), path)
	case fi.Size() != sealKeySize:
		return fmt.Errorf("seal key %s holds %d bytes, want %d; remove it and restart to create a new key "+
			"(requestStates already issued will then be refused)", path, fi.Size(), sealKeySize)
	}
	return nil
}

// createSealKey installs a new key at path unless one is already there.
// The key is written and synced to a private temp file first, then
// hard-linked into place: link, like O_EXCL, fails if path exists, but
// unlike O_EXCL on path itself no other process can ever read a
// half-written key. The loser of a race keeps the winner's key.
func createSealKey(dir, path string) error {
	key := make([]byte, sealKeySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("generate seal key: %w", err)
	}
	tmp, err := writeTempKey(dir, key)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("install seal key %s: %w", path, err)
	}
	return nil
}

// writeTempKey writes key to a new 0600 file in dir and returns its name.
func writeTempKey(dir string, key []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+sealKeyFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create seal key: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write seal key: %w", err)
	}
	return f.Name(), nil
}
