package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/test/internal/harness"
)

// `make run` (clustersync demo --exit) brings the main job up on a fresh
// home with the real node and the virtual cluster in it (the chart),
// proves from pods that the virtual DNS resolves the web Service to its
// virtual IP, that the page comes back by name, and that the pods' own API
// server lists the virtual pods; this machine reaches each pod; it shows
// each virtual object next to its host copy, serves the dashboard whose
// page of demo shows the web pods next to their host copies, and removes
// everything it started when it exits.
func TestDemo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the demo's real node needs root")
	}
	raw := cli(t, "demo", "--exit", "--dashboard-addr", "127.0.0.1:0")
	harness.RequireRealNode(t, raw)
	// Compare with runs of spaces collapsed: the table's column widths
	// depend on name lengths.
	out := strings.Join(strings.Fields(raw), " ")
	for _, want := range []string{
		"all 3 web pods are Running and Ready in the virtual cluster",
		"web.demo.svc.cluster.local resolves to 10.96.",
		"(Service demo/web) in pod demo/dns-check, through the virtual cluster's DNS",
		"GET http://web.demo.svc.cluster.local/ from pod demo/web-check: the page, served by web-",
		"GET https://kubernetes.default.svc/api/v1/namespaces/demo/pods from pod demo/api-check, as its service account:",
		"clustersync virtual connect demo -n vc-demo -- kubectl get pods -A",
		"from this machine (pod demo/web-",
		"Secret's key names (API_TOKEN), never their values",
		"Pod demo/web-",
		"-x-demo-x-demo Running on clustersync-node, IP 10.244.0.",
		"Where the time went: host",
		"Service demo/web vc-demo/web-x-demo-x-demo clusterIP",
		"Secret demo/unused - not synced",
		"Secret demo/web-credentials vc-demo/web-credentials-x-demo-x-demo synced (used by a pod)",
		"ConfigMap demo/web-content vc-demo/web-content-x-demo-x-demo synced (used by a pod)",
		"PersistentVolumeClaim demo/data vc-demo/data-x-demo-x-demo",
		"kubectl --kubeconfig",
		// The dashboard it serves, signed in to with the host's kubeconfig.
		"lists virtual cluster demo; its page shows its 3 web pods next to their host copies",
		"Dashboard: http://127.0.0.1:",
		"config view --raw --minify --flatten",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, raw)
		}
	}
	if n := strings.Count(out, "Running on clustersync-node"); n != 3 {
		t.Errorf("want 3 pods running on the real node in the table, got %d:\n%s", n, raw)
	}
	if n := strings.Count(out, "from this machine (pod demo/web-"); n != 3 {
		t.Errorf("want a GET of each of the 3 pods, got %d:\n%s", n, raw)
	}
	tests.CheckNothingLeft(t)
	for _, dir := range []string{filepath.Join(tests.Dir, "virtual", "demo"), filepath.Join(tests.Dir, "host")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind after demo --exit (%v)", dir, err)
		}
	}
}
