package realnode

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	toml "github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func options() Options {
	return Options{
		Dir: "/var/lib/cs/node", NodeName: "cs-node", Bridge: "cs0",
		PodCIDR: netip.MustParsePrefix("10.244.0.0/24"), ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"),
		Registry: "127.0.0.1:5001", Mirrors: []string{"ghcr.io"}, PauseImage: "ghcr.io/clustersync/pause:dev",
		LocalPathHelperImage: "ghcr.io/clustersync/local-path-helper:dev",
		CNIBinDir:            "/cache/node/cni", Runc: "/usr/sbin/runc",
		KubeletPort: 10250, KubeletHealthzPort: 10248, ProxyHealthzPort: 10256, ProxyMetricsPort: 10249,
		ClientCAFile: "/pki/ca.crt", ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
	}
}

func TestValidate(t *testing.T) {
	if err := options().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Options)
	}{
		{"Dir", func(o *Options) { o.Dir = "relative" }},
		{"NodeName", func(o *Options) { o.NodeName = "" }},
		{"Bridge", func(o *Options) { o.Bridge = "a-name-of-16-byt" }},
		{"PodCIDR", func(o *Options) { o.PodCIDR = netip.MustParsePrefix("10.244.0.0/31") }},
		{"ClusterCIDR", func(o *Options) { o.ClusterCIDR = netip.MustParsePrefix("10.245.0.0/16") }},
		{"Registry", func(o *Options) { o.Registry = "" }},
	} {
		o := options()
		tc.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: err = %v, want one naming %s", tc.field, err, tc.field)
		}
	}
}

func TestNodeIP(t *testing.T) {
	o := options()
	o.PodCIDR = netip.MustParsePrefix("10.244.3.7/24")
	if got := o.NodeIP().String(); got != "10.244.3.1" {
		t.Errorf("NodeIP = %s", got)
	}
}

// containerd's configuration carries what a node on this kind of machine
// needs, under the plugin names containerd 2.x reads.
func TestContainerdConfig(t *testing.T) {
	data, err := ContainerdConfig(options())
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int    `toml:"version"`
		Root    string `toml:"root"`
		GRPC    struct {
			Address string `toml:"address"`
		} `toml:"grpc"`
		Plugins map[string]map[string]any `toml:"plugins"`
	}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	images, runtime := cfg.Plugins["io.containerd.cri.v1.images"], cfg.Plugins["io.containerd.cri.v1.runtime"]
	if cfg.Version != 3 || cfg.Root != "/var/lib/cs/node/containerd/root" || cfg.GRPC.Address != "/var/lib/cs/node/containerd.sock" ||
		images["pinned_images"].(map[string]any)["sandbox"] != "ghcr.io/clustersync/pause:dev" ||
		images["registry"].(map[string]any)["config_path"] != "/var/lib/cs/node/containerd/certs.d" ||
		runtime["restrict_oom_score_adj"] != true || runtime["netns_mounts_under_state_dir"] != true {
		t.Errorf("containerd config:\n%s", data)
	}
	runc := runtime["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)
	if runc["options"].(map[string]any)["BinaryName"] != "/usr/sbin/runc" {
		t.Errorf("runc: %v", runc)
	}
	if got := options().RegistryHosts(); strings.Join(got, ",") != "127.0.0.1:5001,ghcr.io" {
		t.Errorf("registry hosts %v", got)
	}
	if got := options().HostsFile("ghcr.io"); got != "/var/lib/cs/node/containerd/certs.d/ghcr.io/hosts.toml" {
		t.Errorf("hosts file %s", got)
	}
	hosts, err := HostsTOML(options())
	if err != nil || !strings.Contains(string(hosts), `server = 'http://127.0.0.1:5001'`) || !strings.Contains(string(hosts), "'pull'") {
		t.Errorf("hosts.toml (%v):\n%s", err, hosts)
	}
}

// The CNI configuration is one libcni accepts: bridge with host-local
// addresses of the pod range, portmap, loopback.
func TestCNIConfig(t *testing.T) {
	data, err := CNIConfig(options())
	if err != nil {
		t.Fatal(err)
	}
	list, err := libcni.ConfListFromBytes(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var types []string
	for _, p := range list.Plugins {
		types = append(types, p.Network.Type)
	}
	if strings.Join(types, ",") != "bridge,portmap,loopback" || list.CNIVersion != "1.0.0" {
		t.Errorf("plugins %v version %s", types, list.CNIVersion)
	}
	if s := string(data); !strings.Contains(s, `"subnet": "10.244.0.0/24"`) || !strings.Contains(s, `"gateway": "10.244.0.1"`) || !strings.Contains(s, `"bridge": "cs0"`) {
		t.Errorf("bridge config:\n%s", data)
	}
}

// The kubelet's configuration decodes as a KubeletConfiguration with the
// settings this machine needs, evictionHard present and empty, and no
// anonymous access.
func TestKubeletConfig(t *testing.T) {
	data, err := KubeletConfig(options())
	if err != nil {
		t.Fatal(err)
	}
	var c kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if c.Kind != "KubeletConfiguration" || c.Address != "10.244.0.1" || c.ContainerRuntimeEndpoint != "unix:///var/lib/cs/node/containerd.sock" ||
		*c.FailCgroupV1 || *c.FailSwapOn || *c.LocalStorageCapacityIsolation || c.CgroupDriver != "cgroupfs" ||
		*c.Authentication.Anonymous.Enabled || c.Authentication.X509.ClientCAFile != "/pki/ca.crt" || c.ReadOnlyPort != 0 {
		t.Errorf("kubelet config:\n%s", data)
	}
	if c.EvictionHard == nil || len(c.EvictionHard) != 0 || !strings.Contains(string(data), "evictionHard: {}") {
		t.Errorf("evictionHard must be present and empty:\n%s", data)
	}
}

func TestKubeProxyConfig(t *testing.T) {
	data, err := KubeProxyConfig(options(), "/var/lib/cs/node/kube-proxy/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	var c kubeproxyv1alpha1.KubeProxyConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if c.Mode != "iptables" || c.ClientConnection.Kubeconfig != "/var/lib/cs/node/kube-proxy/kubeconfig" || c.HostnameOverride != "cs-node" ||
		c.ClusterCIDR != "10.244.0.0/16" || *c.Conntrack.MaxPerCore != 0 || c.HealthzBindAddress != "127.0.0.1:10256" {
		t.Errorf("kube-proxy config:\n%s", data)
	}
}

// The provisioner keeps volumes below the node's folder and runs the
// helper program directly (no shell); its helper pods run only that image,
// on the node's network, without a token.
func TestLocalPathConfig(t *testing.T) {
	o := options()
	raw, err := LocalPathConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		NodePathMap []struct {
			Node  string   `json:"node"`
			Paths []string `json:"paths"`
		} `json:"nodePathMap"`
		SetupCommand, TeardownCommand string
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NodePathMap) != 1 || cfg.NodePathMap[0].Node != "DEFAULT_PATH_FOR_NON_LISTED_NODES" ||
		len(cfg.NodePathMap[0].Paths) != 1 || cfg.NodePathMap[0].Paths[0] != "/var/lib/cs/node/volumes" {
		t.Errorf("nodePathMap %+v, want every node's volumes in /var/lib/cs/node/volumes", cfg.NodePathMap)
	}
	if cfg.SetupCommand != "/local-path-helper" || cfg.TeardownCommand != "/local-path-helper" {
		t.Errorf("setupCommand %q, teardownCommand %q", cfg.SetupCommand, cfg.TeardownCommand)
	}
	podYAML, err := LocalPathHelperPod(o)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(podYAML, &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Image != o.LocalPathHelperImage || !pod.Spec.HostNetwork ||
		pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("helper pod %s", podYAML)
	}
	o.LocalPathHelperImage = ""
	if _, err := LocalPathHelperPod(o); err == nil {
		t.Error("a helper pod without an image")
	}
}
