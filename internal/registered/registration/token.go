package registration

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"time"
)

// TokenLength is the length of a registration token, in characters of
// [a-z0-9] (about 248 bits).
const TokenLength = 48

// Token rotation defaults (spec.importedConfig.tokenTTLSeconds and
// tokenGraceSeconds when nil).
const (
	DefaultTTL   = 24 * time.Hour
	DefaultGrace = time.Hour
)

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewToken returns a random token of TokenLength characters [a-z0-9],
// which never contains '_' and so can be split from a cluster name in the
// import URL. The error is crypto/rand's.
func NewToken() (string, error) {
	b := make([]byte, TokenLength)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	// 256 % 36 != 0: redraw the few bytes that would bias the alphabet.
	out := make([]byte, 0, TokenLength)
	for len(out) < TokenLength {
		for _, c := range b {
			if c < 252 && len(out) < TokenLength { // 252 = 7*36
				out = append(out, tokenAlphabet[int(c)%len(tokenAlphabet)])
			}
		}
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
	}
	return string(out), nil
}

// Tokens are the valid registration tokens of one cluster: the current one
// and, after a rotation, the previous one for its grace period.
type Tokens struct {
	// Current is the token new manifests carry.
	Current string `json:"current,omitempty"`
	// CurrentExpires is when Current stops being valid.
	CurrentExpires time.Time `json:"currentExpires,omitempty"`
	// Previous is the token before the last rotation.
	Previous string `json:"previous,omitempty"`
	// PreviousValidUntil is when Previous stops being valid.
	PreviousValidUntil time.Time `json:"previousValidUntil,omitempty"`
}

// Valid reports whether token is Current before CurrentExpires or Previous
// before PreviousValidUntil, comparing in constant time. An empty token is
// never valid.
func (t Tokens) Valid(token string, now time.Time) bool {
	if token == "" {
		return false
	}
	cur := t.Current != "" && now.Before(t.CurrentExpires) && subtle.ConstantTimeCompare([]byte(token), []byte(t.Current)) == 1
	prev := t.Previous != "" && now.Before(t.PreviousValidUntil) && subtle.ConstantTimeCompare([]byte(token), []byte(t.Previous)) == 1
	return cur || prev
}

// Due reports whether a new token should be made: there is none, or the
// current one expires within a tenth of ttl (tokens rotate a little before
// they expire, so a manifest fetched just before never carries a dead one).
func (t Tokens) Due(now time.Time, ttl time.Duration) bool {
	return t.Current == "" || !now.Add(ttl/10).Before(t.CurrentExpires)
}

// Next returns when Due turns true, for a requeue: zero when it is
// already due.
func (t Tokens) Next(now time.Time, ttl time.Duration) time.Duration {
	if t.Due(now, ttl) {
		return 0
	}
	return t.CurrentExpires.Add(-ttl / 10).Sub(now)
}

// Rotate makes fresh the current token, valid for ttl from now, and keeps
// the old current token as Previous for grace from now, but not beyond its
// own expiry plus grace: an expired token does not come back. Errors: ttl
// or grace not positive, or fresh empty.
func Rotate(t Tokens, now time.Time, ttl, grace time.Duration, fresh string) (Tokens, error) {
	if ttl <= 0 || grace <= 0 {
		return t, errors.New("registration: token TTL and grace period must be positive")
	}
	if fresh == "" {
		return t, errors.New("registration: new token is empty")
	}
	out := Tokens{Current: fresh, CurrentExpires: now.Add(ttl)}
	if t.Current != "" {
		until := now.Add(grace)
		if limit := t.CurrentExpires.Add(grace); limit.Before(until) {
			until = limit
		}
		if now.Before(until) {
			out.Previous, out.PreviousValidUntil = t.Current, until
		}
	}
	return out, nil
}
