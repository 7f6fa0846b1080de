// Package ocitest serves an OCI registry in the test process
// (go-containerregistry's, in memory) for tests that push and pull images
// or charts. It imports nothing of clustersync, so that any package's
// in-package tests may use it.
package ocitest

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry serves an empty in-memory registry over plain HTTP on loopback
// until t ends, without request logs, and returns its host:port.
func Registry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
