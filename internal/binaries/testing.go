package binaries

import (
	"errors"
	"flag"
	"testing"
)

// ErrShort is returned by ForTestMain under -short: the tests that need API
// servers are skipped, and `go test -short` runs only the others.
var ErrShort = errors.New("-short: tests that run API servers are skipped")

// Require returns the default Set for a test that runs API servers, every
// binary of it checked (the +k3s1 kube-apiserver too: make test builds it). Under
// -short it skips the test; when a binary is missing it fails the test
// (CI must not pass by skipping).
func Require(t testing.TB) Set {
	t.Helper()
	if testing.Short() {
		t.Skip(ErrShort)
	}
	s := Default()
	if err := errors.Join(s.Check(), s.CheckK3s()); err != nil {
		t.Fatal(err)
	}
	return s
}

// ForTestMain is Require for a TestMain: ErrShort under -short (skip the
// package), another error when a binary is missing (fail the package).
func ForTestMain() (Set, error) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return Set{}, ErrShort
	}
	s := Default()
	return s, errors.Join(s.Check(), s.CheckK3s())
}
