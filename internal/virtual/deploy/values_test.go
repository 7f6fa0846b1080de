package deploy

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// vclusterFile is the vCluster 0.3x file of examples/vcluster, which the
// e2e test installs on the real node.
const vclusterFile = "../../../examples/vcluster/vcluster.yaml"

// helmWarnings captures what Helm logs (its value-merge warnings go to the
// standard logger) while fn runs.
func helmWarnings(t *testing.T, fn func()) string {
	t.Helper()
	var buf bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	log.SetFlags(0)
	defer func() { log.SetOutput(prev); log.SetFlags(flags) }()
	fn()
	return buf.String()
}

// valuesOfFile runs Values on a file holding data and returns the
// configuration; an error or a Helm warning fails t.
func valuesOfFile(t *testing.T, data []byte) *config.Config {
	t.Helper()
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg *config.Config
	var err error
	warnings := helmWarnings(t, func() {
		_, cfg, err = Values([]string{f}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if warnings != "" {
		t.Errorf("Helm warned:\n%s", warnings)
	}
	return cfg
}

// A vCluster file is taken as the pod will read it: its patches, in either
// spelling, and its image, as a string or an object, merge with the chart's
// values.yaml without a conflict and without a Helm warning, and the
// configuration the chart writes for the pod has them.
func TestValuesTakeAVClusterFile(t *testing.T) {
	data, err := os.ReadFile(vclusterFile)
	if err != nil {
		t.Fatal(err)
	}
	patches := string(data)
	translate := strings.ReplaceAll(patches, "patches:", "translate:")
	if translate == patches {
		t.Fatal("the example has no patches")
	}
	stringImage := strings.Replace(patches, `          image:
            registry: ghcr.io
            repository: clustersync/busybox
            tag: "1.35.0"`, "          image: ghcr.io/clustersync/busybox:1.35.0", 1)
	if stringImage == patches {
		t.Fatal("the example has no image object")
	}
	var want *config.Config
	for _, tt := range []struct{ name, file string }{
		{"patches, image object", patches},
		{"translate (the older spelling)", translate},
		{"image as a string", stringImage},
		{"only a pod patch", "sync:\n  toHost:\n    pods:\n      patches:\n        - path: metadata.annotations.a\n          expression: '\"x\"'\n"},
		{"only the image, as an object", "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          image: {registry: r.example.com, repository: alpine, tag: \"3\"}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valuesOfFile(t, []byte(tt.file))
			if !strings.HasPrefix(tt.name, "only") {
				if want == nil {
					want = cfg
				} else if !reflect.DeepEqual(cfg, want) {
					t.Errorf("the configuration differs from the first file's")
				}
				return
			}
			if strings.Contains(tt.name, "patch") && len(cfg.Sync.ToHost.Pods.Translate) != 1 {
				t.Errorf("pod patches %v", cfg.Sync.ToHost.Pods.Translate)
			}
			if strings.Contains(tt.name, "image") && cfg.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image != "r.example.com/alpine:3" {
				t.Errorf("image %q", cfg.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image)
			}
		})
	}
	if want == nil {
		t.Fatal("no configuration")
	}
	tr := want.Sync.ToHost
	for kind, n := range map[string]int{"pods": len(tr.Pods.Translate), "secrets": len(tr.Secrets.Translate), "configMaps": len(tr.ConfigMaps.Translate),
		"services": len(tr.Services.Translate), "ingresses": len(tr.Ingresses.Translate), "persistentVolumeClaims": len(tr.PersistentVolumeClaims.Translate),
		"customResources": len(tr.CustomResources["widgets.example.com"].Translate)} {
		if n != 1 {
			t.Errorf("sync.toHost.%s has %d patches, want the file's 1", kind, n)
		}
	}
	if got := want.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image; got != config.DefaultRewriteHostsImage {
		t.Errorf("image %q, want %q", got, config.DefaultRewriteHostsImage)
	}
}

// What the pod refuses, Values refuses: both spellings of one setting,
// named by their paths.
func TestValuesRefuseBothSpellings(t *testing.T) {
	f := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(f, []byte("sync:\n  toHost:\n    services:\n      patches: []\n      translate: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := Values([]string{f}, nil)
	if err == nil || !strings.Contains(err.Error(), "sync.toHost.services.translate: the same setting as sync.toHost.services.patches") {
		t.Errorf("err %v, want one naming both keys", err)
	}
}

// What the syncer refuses at its start (runner.CheckConfig), Values
// refuses: a toleration it cannot parse, a patch that does not compile.
func TestValuesRefuseWhatTheSyncerRefuses(t *testing.T) {
	for file, want := range map[string]string{
		"sync:\n  toHost:\n    pods:\n      enforceTolerations: [\"=v:NoSchedule\"]\n":                                "sync.toHost.pods.enforceTolerations[0]",
		"sync:\n  toHost:\n    services:\n      patches: [{path: metadata.annotations.a, expression: \"value +\"}]\n": "sync.toHost.services.patches[0]",
	} {
		f := filepath.Join(t.TempDir(), "vcluster.yaml")
		if err := os.WriteFile(f, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Values([]string{f}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one naming %s", file, err, want)
		}
	}
}

// ConfigFile is what the chart writes for the pod: the chart's values.yaml
// with the given values merged in by Helm.
func TestConfigFile(t *testing.T) {
	data, err := ConfigFile(map[string]any{"syncer": map[string]any{"workers": 3}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Syncer.Workers != 3 || !cfg.Sync.ToHost.Pods.Enabled || cfg.Policies.PodSecurityStandard != "baseline" {
		t.Errorf("workers %d, pods %v, pod security %q: want the given value and the chart's defaults", cfg.Syncer.Workers,
			cfg.Sync.ToHost.Pods.Enabled, cfg.Policies.PodSecurityStandard)
	}
}

func TestControlPlaneImage(t *testing.T) {
	cfg := config.Default()
	got, err := ControlPlaneImage(cfg)
	if err != nil || got != "ghcr.io/clustersync/clustersync:latest" {
		t.Errorf("default: %q, %v", got, err)
	}
	cfg.ControlPlane.StatefulSet.Image = config.Image{Repository: "me/cs", Tag: "v1"}
	if got, _ := ControlPlaneImage(cfg); got != "me/cs:v1" {
		t.Errorf("no registry: %q", got)
	}
}

// The conformance profile (examples/conformance/values.yaml, what make
// conformance installs) is taken by the chart and turns off, in the
// configuration the pod reads, every policy of the secure defaults that a
// conformance test trips over, syncs the real nodes and runs the virtual
// scheduler.
func TestValuesConformanceProfile(t *testing.T) {
	var cfg *config.Config
	var err error
	warnings := helmWarnings(t, func() {
		_, cfg, err = Values([]string{"../../../examples/conformance/values.yaml"}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if warnings != "" {
		t.Errorf("Helm warned:\n%s", warnings)
	}
	p := cfg.Policies
	if p.PodSecurityStandard != config.PodSecurityPrivileged || p.ResourceQuota.Enabled.Resolve(true) || p.LimitRange.Enabled.Resolve(true) ||
		p.NetworkPolicy.Enabled || p.Isolation != (config.Isolation{}) {
		t.Errorf("policies: %+v", p)
	}
	n := cfg.Sync.FromHost.Nodes
	if !n.Enabled || !n.Selector.All {
		t.Errorf("sync.fromHost.nodes: %+v", n)
	}
	if !cfg.ControlPlane.Advanced.VirtualScheduler.Enabled {
		t.Error("controlPlane.advanced.virtualScheduler is off: the scheduling tests need it")
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the profile does not validate: %v", err)
	}
}

// The values.yaml of each vCluster minor release from 0.20 on (its newest
// patch), the file every `vcluster create` starts from, passes the chart's
// schema and Parse, merges with the chart's values.yaml without a Helm
// warning, and gives no note: it sets nothing to other than vCluster's
// defaults.
func TestValuesTakeEveryVClusterRelease(t *testing.T) {
	k := config.VCluster()
	newest := map[string]string{} // minor → newest release
	for _, r := range k.Releases {
		minor := strings.Join(strings.SplitN(r, ".", 3)[:2], ".")
		newest[minor] = r
	}
	if len(newest) < 18 {
		t.Fatalf("releases of %d minor versions, want 0.20 to 0.37", len(newest))
	}
	for _, r := range newest {
		t.Run(r, func(t *testing.T) {
			data, err := yaml.Marshal(k.Values(r))
			if err != nil {
				t.Fatal(err)
			}
			if msg := valuesOfFile(t, data).NoEffectMessage(); msg != "" {
				t.Errorf("note: %s", msg)
			}
		})
	}
}
