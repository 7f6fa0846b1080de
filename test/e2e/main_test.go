// Package e2e tests the clustersync binary as a user runs it: it builds the
// binary, points CLUSTERSYNC_HOME at a temporary folder, and drives
// `clustersync dev up`, `clustersync virtual …` and the API servers they
// start. The Kubernetes binaries come from the cache of `make binaries`.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	dir, h, err := harness.Build("clustersync-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tests = h
	code := m.Run()
	// Whatever a failed test left running is stopped (in the tests' home,
	// never the developer's own): its virtual clusters (`dev down` leaves
	// them), then the host.
	if vcs, err := os.ReadDir(filepath.Join(tests.Dir, "virtual")); err == nil {
		for _, vc := range vcs {
			_, _ = cliErr("virtual", "stop", vc.Name())
		}
	}
	_, _ = cliErr("dev", "down")
	if code == 0 {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "e2e state and logs kept in", dir)
	}
	return code
}
