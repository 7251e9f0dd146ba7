package seal

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
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	// sealKeyFile lives in the state dir so the key survives restarts:
	// a host retrying across a restart still gets its call resumed.
	sealKeyFile = "seal.key"
	KeySize     = 32
	// sealNonceSize is 128 bits: enough that two seals never share one.
	sealNonceSize = 16
	// maxStateSize bounds the work an attacker can make Open do; it is
	// checked before anything is decoded.
	maxStateSize = 64 << 10
	// sealDomain separates this MAC from any other use of the same key and
	// names the format version, so a v2 can never be mistaken for a v1.
	sealDomain = "mcpx-fw/requestState/v1\n"
	// nonceSweepEvery spaces out the sweeps of the used-nonce set, so Open
	// stays O(1) amortised while the set still shrinks as states expire.
	nonceSweepEvery = time.Minute
)

// stateB64 is strict so that every byte string has exactly one encoding:
// the lax decoder ignores the low bits of the last character, which would
// let a changed state open as if it were the original.
var stateB64 = base64.RawURLEncoding.Strict()

// Reasons Open and Unseal refuse a state. They are wrapped with detail
// (for the log, never for the wire); callers test them with errors.Is and
// give the host one short phrase for each.
var (
	ErrMalformed   = errors.New("requestState malformed")
	ErrTampered    = errors.New("requestState tampered")
	ErrExpired     = errors.New("requestState expired")
	ErrWrongServer = errors.New("requestState issued for another server")
	ErrWrongCall   = errors.New("requestState issued for another call")
	ErrReplayed    = errors.New("requestState already used")
)

// Continuation is what the firewall needs to resume a host call on its retry.
type Continuation struct {
	Server string   // the upstream's configured name
	Call   string   // a digest of the host's call (method, name, arguments), see CallDigest
	State  string   // the upstream's own requestState, byte for byte (may be empty)
	Keys   []string // the input keys the host was asked to answer
	Round  int      // rounds already taken for this call
	Bridge string   // id of a suspended bridged call, empty if none
	// Replica names the firewall process that holds the bridged call
	// (relay's replica name); set only with Bridge, since only a bridged call
	// lives in one process's memory.
	Replica string
	// Lease is the review store's owner token of that process (its lease
	// on PostgreSQL), set with Replica when it has a store: another
	// replica asks the store whether it still runs before handing the
	// call's retry to it.
	Lease   string
	Expires time.Time // after this the state is refused
	Nonce   string    // random, 128-bit, set by Seal; one-time use
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
	Lease   string    `json:"lease,omitempty"`
	Expires time.Time `json:"exp"`
	Nonce   string    `json:"n"`
}

// Sealer seals and opens requestStates with one key and remembers which
// nonces were spent, so each sealed state opens at most once.
type Sealer struct {
	key []byte
	now func() time.Time

	mu        sync.Mutex
	used      map[string]time.Time // nonce → the state's expiry
	nextSweep time.Time
}

// New returns a Sealer for key (at least KeySize bytes, see
// LoadKey); now nil means time.Now. A shorter key is a programming
// error and panics: a weak key would make every seal forgeable, silently.
func New(key []byte, now func() time.Time) *Sealer {
	if len(key) < KeySize {
		panic(fmt.Sprintf("seal: key is %d bytes, want %d", len(key), KeySize))
	}
	if now == nil {
		now = time.Now
	}
	return &Sealer{key: bytes.Clone(key), now: now, used: map[string]time.Time{}}
}

// Seal gives c a fresh nonce and returns it as an opaque requestState.
// Any Nonce already in c is replaced: only Seal may choose one.
func (s *Sealer) Seal(c Continuation) (string, error) {
	state, _, err := s.Sealed(c)
	return state, err
}

// Sealed is Seal, also returning c as sealed, with its nonce: relay names
// the round's row in its shared store by it.
func (s *Sealer) Sealed(c Continuation) (string, Continuation, error) {
	nonce := make([]byte, sealNonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return "", Continuation{}, fmt.Errorf("seal requestState: %w", err)
	}
	c.Nonce = hex.EncodeToString(nonce)
	state, err := s.Encode(c)
	return state, c, err
}

// Encode is Seal without choosing a nonce: it MACs c exactly as given.
// The firewall seals with Seal; Encode lets a test forge a state that
// reuses another's nonce.
func (s *Sealer) Encode(c Continuation) (string, error) {
	if err := sealable(c); err != nil {
		return "", fmt.Errorf("seal requestState: %w", err)
	}
	payload, err := json.Marshal(sealedPayload{
		Server: c.Server, Call: c.Call, State: []byte(c.State), Keys: c.Keys,
		Round: c.Round, Bridge: c.Bridge, Replica: c.Replica, Lease: c.Lease, Expires: c.Expires, Nonce: c.Nonce,
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
func sealable(c Continuation) error {
	if c.Expires.IsZero() {
		return errors.New("Expires is not set")
	}
	if c.Nonce == "" {
		return errors.New("Nonce is not set")
	}
	fields := append([]string{c.Server, c.Call, c.Bridge, c.Replica, c.Lease, c.Nonce}, c.Keys...)
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return errors.New("a field other than State is not valid UTF-8")
		}
	}
	return nil
}

// Open checks state and returns its continuation, spending its nonce.
// The checks run cheapest and least trusting first: shape and size, then
// the MAC (nothing is parsed as JSON before it is authentic), then expiry,
// binding and replay. A state that fails any check spends nothing, so a
// host that sends it to the wrong call can still use it on the right one.
// Errors never quote the state: it may carry upstream data.
func (s *Sealer) Open(state, server, call string) (Continuation, error) {
	c, err := s.Unseal(state, server, call)
	if err != nil {
		return Continuation{}, err
	}
	return c, s.Spend(c)
}

// Unseal is Open without the replay check: the state is authentic,
// unexpired and for this server and call. A round relay keeps in its
// shared store is spent by taking its row, which every replica sees; only
// rounds kept in this process's memory are spent with Spend.
func (s *Sealer) Unseal(state, server, call string) (Continuation, error) {
	payload, err := s.verify(state)
	if err != nil {
		return Continuation{}, err
	}
	c, err := decodePayload(payload)
	if err != nil {
		return Continuation{}, err
	}
	if err := checkBinding(c, s.now(), server, call); err != nil {
		return Continuation{}, err
	}
	return c, nil
}

// Spend spends c's nonce in this process, or reports that it was spent.
func (s *Sealer) Spend(c Continuation) error {
	if !s.spend(c.Nonce, c.Expires, s.now()) {
		return fmt.Errorf("%w: its nonce was spent by an earlier retry", ErrReplayed)
	}
	return nil
}

// ServerOf is the server a state the firewall sealed was issued for, read
// without spending it; false for anything that is not such a state.
func (s *Sealer) ServerOf(state string) (string, bool) {
	payload, err := s.verify(state)
	if err != nil {
		return "", false
	}
	c, err := decodePayload(payload)
	return c.Server, err == nil
}

// verify returns the payload of a well-formed state whose MAC is ours.
func (s *Sealer) verify(state string) ([]byte, error) {
	payload, mac, err := splitState(state)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac, s.mac(payload)) {
		return nil, fmt.Errorf("%w: MAC does not match (altered, or sealed with another key)", ErrTampered)
	}
	return payload, nil
}

// splitState decodes "payload.mac". The alphabet is checked by hand
// because the base64 decoder skips CR and LF even when strict.
func splitState(state string) (payload, mac []byte, err error) {
	switch {
	case state == "":
		return nil, nil, fmt.Errorf("%w: empty", ErrMalformed)
	case len(state) > maxStateSize:
		return nil, nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrMalformed, len(state), maxStateSize)
	}
	p, m, ok := strings.Cut(state, ".")
	if !ok || !isBase64URL(p) || !isBase64URL(m) {
		return nil, nil, fmt.Errorf("%w: not two base64url parts joined by one dot", ErrMalformed)
	}
	if payload, err = stateB64.DecodeString(p); err != nil {
		return nil, nil, fmt.Errorf("%w: payload is not canonical base64url", ErrMalformed)
	}
	if mac, err = stateB64.DecodeString(m); err != nil || len(mac) != sha256.Size {
		return nil, nil, fmt.Errorf("%w: MAC is not %d bytes of canonical base64url", ErrMalformed, sha256.Size)
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

func (s *Sealer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(sealDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// decodePayload parses an authentic payload. It fails only if the key
// sealed something that is not a v1 continuation, which is still refused.
func decodePayload(payload []byte) (Continuation, error) {
	var p sealedPayload
	if err := json.Unmarshal(payload, &p); err != nil || p.Nonce == "" || p.Expires.IsZero() {
		return Continuation{}, fmt.Errorf("%w: authentic but not a continuation", ErrMalformed)
	}
	return Continuation{
		Server: p.Server, Call: p.Call, State: string(p.State), Keys: p.Keys,
		Round: p.Round, Bridge: p.Bridge, Replica: p.Replica, Lease: p.Lease, Expires: p.Expires, Nonce: p.Nonce,
	}, nil
}

// checkBinding refuses a state past its deadline or presented to another
// server or call than the one it was sealed for.
func checkBinding(c Continuation, now time.Time, server, call string) error {
	switch {
	case now.After(c.Expires):
		return fmt.Errorf("%w: deadline passed %s ago", ErrExpired, now.Sub(c.Expires).Round(time.Millisecond))
	case c.Server != server:
		return fmt.Errorf("%w: presented to server %q", ErrWrongServer, server)
	case c.Call != call:
		return fmt.Errorf("%w: the call's method, name or arguments differ", ErrWrongCall)
	}
	return nil
}

// spend marks nonce used until expires and reports whether it was unused.
// Check and mark happen under one lock, so of any number of concurrent
// retries carrying the same state exactly one gets through.
func (s *Sealer) spend(nonce string, expires, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if _, spent := s.used[nonce]; spent {
		return false
	}
	s.used[nonce] = expires
	return true
}

// sweep forgets nonces whose states have expired: Open refuses those as
// expired before it looks at the nonce, so they need not be remembered.
// The set is thus bounded by the states sealed within one TTL.
func (s *Sealer) sweep(now time.Time) {
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
