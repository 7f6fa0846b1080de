// Package chaos is the fault-injection suite of the virtual clusters (issue
// 12): a seeded churn of thousands of creates, updates and deletes of pods,
// services, secrets and config maps in a virtual cluster on the local real
// node, with host-side edits of the host copies racing it, while the syncer
// is SIGKILLed, the control plane pod deleted and the host's kube-apiserver
// restarted at random points; then a check, polled until it holds, that the
// host namespace is exactly what the syncer's own translation makes of the
// virtual objects and that every virtual object is intact.
//
// TestChaos runs only when CLUSTERSYNC_CHAOS is set (`make chaos` for the
// full run, and a short run at the end of `make test`): it needs the
// machine's one real node, which test/e2e's tests use too, so it must not
// run beside them inside `go test ./...`.
package chaos

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/test/internal/harness"
)

// tests is the clustersync binary built for this test and its
// CLUSTERSYNC_HOME.
var tests harness.Home

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	// client-go's reflectors log every failed watch, and this test makes
	// their API servers go away on purpose.
	klog.SetLogger(logr.Discard())
	os.Exit(run(m))
}

// run is harness.Main, once the machine has the binaries and the run is
// asked for (CLUSTERSYNC_CHAOS).
func run(m *testing.M) int {
	if _, err := binaries.ForTestMain(); errors.Is(err, binaries.ErrShort) {
		fmt.Println("skipping the chaos test:", err)
		return 0
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv(enableEnv) == "" {
		// No binary to build, no host to start: TestChaos says why it skips.
		return m.Run()
	}
	return harness.Main(m, "clustersync-chaos-", func(h harness.Home) { tests = h })
}
