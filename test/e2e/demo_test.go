package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `make run` (clustersync demo --exit) brings the main job up on a fresh
// home, shows each virtual object next to its host copy, and removes
// everything it started when it exits.
func TestDemo(t *testing.T) {
	raw := cli(t, "demo", "--exit")
	// Compare with runs of spaces collapsed: the table's column widths
	// depend on name lengths.
	out := strings.Join(strings.Fields(raw), " ")
	for _, want := range []string{
		"all 3 web pods are Running in the virtual cluster",
		"Pod demo/web-",
		"-x-demo-x-demo Running on node-",
		"Service demo/web vc-demo/web-x-demo-x-demo clusterIP",
		"Secret demo/unused - not synced",
		"Secret demo/web-credentials vc-demo/web-credentials-x-demo-x-demo synced (used by a pod)",
		"ConfigMap demo/web-content vc-demo/web-content-x-demo-x-demo synced (used by a pod)",
		"PersistentVolumeClaim demo/data vc-demo/data-x-demo-x-demo",
		"kubectl --kubeconfig",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, raw)
		}
	}
	if strings.Count(out, "Running on node-") != 3 {
		t.Errorf("want 3 running pods in the table:\n%s", raw)
	}
	for _, dir := range []string{filepath.Join(home, "virtual", "demo"), filepath.Join(home, "host", "kubeconfig.yaml")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind after demo --exit (%v)", dir, err)
		}
	}
}
