package chaos

// The helpers below drive the CLI and the local real node through
// test/internal/harness, which test/e2e uses too.

import (
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/test/internal/harness"
)

// cli runs clustersync with args and returns its combined output; it fails
// t when the command fails.
func cli(t *testing.T, args ...string) string { return tests.MustRun(t, args...) }

func cliErr(args ...string) (string, error) { return tests.Run(args...) }

// restConfig is harness.RestConfig with requests bounded by a timeout
// (the API servers of this test go away on purpose) and no client-side
// rate limit (the churn sets its own pace).
func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	cfg := harness.RestConfig(t, kubeconfig)
	cfg.Timeout = 20 * time.Second
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func clientFor(t *testing.T, kubeconfig string) client.Client {
	return harness.ClientFor(t, restConfig(t, kubeconfig))
}

// devUpReal runs `dev up` with the real node (skipping t without root or
// when the machine's real node belongs to another host cluster), has `dev
// down` run at the end of t and checks that it left nothing behind.
func devUpReal(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a real node needs root")
	}
	out := cli(t, "dev", "up")
	t.Cleanup(func() {
		if out, err := cliErr("dev", "down"); err != nil {
			t.Errorf("clustersync dev down: %v\n%s", err, out)
			return
		}
		tests.CheckNothingLeft(t)
	})
	harness.RequireRealNode(t, out)
}
