// Package e2e tests the clustersync binary as a user runs it: it builds the
// binary, points CLUSTERSYNC_HOME at a temporary folder, and drives
// `clustersync dev up`, `clustersync virtual …` and the API servers they
// start. The Kubernetes binaries come from the cache of `make binaries`.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/test/internal/harness"
)

// tests is the clustersync binary built for these tests and its
// CLUSTERSYNC_HOME.
var tests harness.Home

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := binaries.ForTestMain(); errors.Is(err, binaries.ErrShort) {
		fmt.Println("skipping e2e tests:", err)
		return 0
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return harness.Main(m, "clustersync-e2e-", func(h harness.Home) { tests = h })
}
