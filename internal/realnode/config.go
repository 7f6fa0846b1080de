// Package realnode describes the local host's real node: containerd 2.x
// with runc, the CNI bridge, kubelet and kube-proxy (iptables mode) on this
// machine, so that pods really run. This file renders their configuration
// from Options, as pure functions (table-tested); what each setting is for,
// and which ones a machine of this project's kind needs, is written next to
// it. The facts come from running a node on such a machine (Debian 12,
// cgroup v1, no CAP_SYS_RESOURCE, no dummy links, nothing pulled from public
// registries); docs/development.md keeps them.
package realnode

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Options describe one real node.
type Options struct {
	// Dir is the node's state folder; every file and socket of the node
	// lives below it.
	Dir string
	// NodeName is the Node object's name.
	NodeName string
	// Bridge is the name of the CNI bridge (at most 15 bytes), e.g. "cs0".
	Bridge string
	// PodCIDR is this node's pod range, e.g. 10.244.0.0/24; the bridge takes
	// its first address, which is also the node IP (the kubelet refuses a
	// loopback node IP, and this machine has no dummy links).
	PodCIDR netip.Prefix
	// ClusterCIDR is every node's pod ranges, e.g. 10.244.0.0/16 (kube-proxy
	// tells pod traffic from outside traffic by it).
	ClusterCIDR netip.Prefix
	// ServiceCIDR is the cluster's Service range, e.g. 10.96.0.0/16; when
	// set, the node rejects packets to it that no Service translates
	// (ServiceRejectChain).
	ServiceCIDR netip.Prefix
	// Registry is the local registry's host:port; containerd pulls from it
	// over plain HTTP, for its own name and for every name in Mirrors.
	Registry string
	// Mirrors are registry hosts (e.g. "ghcr.io") whose images containerd
	// pulls from Registry instead, so images keep their canonical names.
	Mirrors []string
	// PauseImage is the sandbox image reference.
	PauseImage string
	// LocalPathHelperImage is the image of the storage provisioner's
	// helper pods (internal/images/localpathhelper).
	LocalPathHelperImage string
	// CNIBinDir holds the bridge, host-local, loopback and portmap plugins.
	CNIBinDir string
	// Runc is the runc binary (Debian's, with seccomp).
	Runc string
	// KubeletPort and KubeletHealthzPort are the kubelet's API and healthz
	// ports; ProxyHealthzPort and ProxyMetricsPort kube-proxy's.
	KubeletPort, KubeletHealthzPort, ProxyHealthzPort, ProxyMetricsPort int32
	// ClientCAFile is the CA the kubelet trusts for client certificates
	// (the API server's kubelet client certificate).
	ClientCAFile string
	// ClusterDNS are the DNS servers pods get; ClusterDomain their domain.
	ClusterDNS    []string
	ClusterDomain string
}

// NodeIP is the node's address: the first address of PodCIDR, carried by
// the bridge.
func (o Options) NodeIP() netip.Addr { return o.PodCIDR.Masked().Addr().Next() }

// Validate reports the first Option that cannot work, naming it.
func (o Options) Validate() error {
	switch {
	case o.Dir == "" || !filepath.IsAbs(o.Dir):
		return fmt.Errorf("realnode: Dir %q must be an absolute path", o.Dir)
	case o.NodeName == "":
		return fmt.Errorf("realnode: NodeName is empty")
	case o.Bridge == "" || len(o.Bridge) > 15:
		return fmt.Errorf("realnode: Bridge %q must have 1 to 15 bytes (a Linux interface name)", o.Bridge)
	case !o.PodCIDR.IsValid() || !o.PodCIDR.Addr().Is4() || o.PodCIDR.Bits() > 30:
		return fmt.Errorf("realnode: PodCIDR %s must be an IPv4 range of at least 4 addresses", o.PodCIDR)
	case !o.ClusterCIDR.IsValid() || !o.ClusterCIDR.Contains(o.PodCIDR.Addr()) || o.ClusterCIDR.Bits() > o.PodCIDR.Bits():
		return fmt.Errorf("realnode: ClusterCIDR %s must contain PodCIDR %s", o.ClusterCIDR, o.PodCIDR)
	case o.Registry == "" || o.PauseImage == "" || o.LocalPathHelperImage == "" || o.CNIBinDir == "" || o.Runc == "":
		return fmt.Errorf("realnode: Registry, PauseImage, LocalPathHelperImage, CNIBinDir and Runc are required")
	}
	return nil
}

// path is a path below the node's state folder.
func (o Options) path(elem ...string) string {
	return filepath.Join(append([]string{o.Dir}, elem...)...)
}

// ContainerdSocket is containerd's CRI socket.
func (o Options) ContainerdSocket() string { return o.path("containerd.sock") }

// ContainerdConfigFile is containerd's config.toml.
func (o Options) ContainerdConfigFile() string { return o.path("containerd", "config.toml") }

// CertsDir is containerd's registry hosts folder (certs.d).
func (o Options) CertsDir() string { return o.path("containerd", "certs.d") }

// CNIConfDir holds the CNI network configuration.
func (o Options) CNIConfDir() string { return o.path("cni", "net.d") }

// ResolvConfFile is the resolver configuration the kubelet gives pods that
// use the node's DNS (dnsPolicy Default, and ClusterFirst while the
// cluster has no DNS Service): a copy of the machine's /etc/resolv.conf,
// made at each start, which the node owns (tests point it at a DNS server
// of their own).
func (o Options) ResolvConfFile() string { return o.path("resolv.conf") }

// KubeletConfigFile is the kubelet's configuration file.
func (o Options) KubeletConfigFile() string { return o.path("kubelet", "config.yaml") }

// KubeletServingCertFile and KubeletServingKeyFile are the kubelet's
// serving certificate, issued by the cluster CA for the node's name and IP
// (not self-signed: metrics-server and the API server can verify it).
func (o Options) KubeletServingCertFile() string { return o.path("kubelet", "serving.crt") }

// KubeletServingKeyFile is the key of KubeletServingCertFile.
func (o Options) KubeletServingKeyFile() string { return o.path("kubelet", "serving.key") }

// KubeProxyConfigFile is kube-proxy's configuration file.
func (o Options) KubeProxyConfigFile() string { return o.path("kube-proxy", "config.yaml") }

// ContainerdConfig renders containerd 2.x's config.toml (version 3). What
// each setting is for:
//   - root, state and the gRPC socket below Dir, so that nodes do not share
//     anything with a containerd of the machine;
//   - the sandbox image pinned to PauseImage (nothing is pulled from public
//     registries);
//   - registry hosts from CertsDir (HostsTOML), where the local registry is
//     reached over plain HTTP;
//   - restrict_oom_score_adj: without CAP_SYS_RESOURCE runc cannot lower
//     the pause container's oom_score_adj ("can't get final child's PID
//     from pipe: EOF");
//   - pod network namespaces under the state folder
//     (netns_mounts_under_state_dir), so that stopping the node can find
//     and remove every one it made;
//   - the CNI plugins and configuration folders, and runc's path.
func ContainerdConfig(o Options) ([]byte, error) {
	cfg := map[string]any{
		"version": 3,
		"root":    o.path("containerd", "root"),
		"state":   o.path("containerd", "state"),
		"grpc":    map[string]any{"address": o.ContainerdSocket()},
		"plugins": map[string]any{
			"io.containerd.cri.v1.images": map[string]any{
				"pinned_images": map[string]any{"sandbox": o.PauseImage},
				"registry":      map[string]any{"config_path": o.CertsDir()},
			},
			"io.containerd.cri.v1.runtime": map[string]any{
				"restrict_oom_score_adj":       true,
				"netns_mounts_under_state_dir": true,
				"cni":                          map[string]any{"bin_dirs": []string{o.CNIBinDir}, "conf_dir": o.CNIConfDir()},
				"containerd": map[string]any{"runtimes": map[string]any{"runc": map[string]any{
					"runtime_type": "io.containerd.runc.v2",
					"options":      map[string]any{"BinaryName": o.Runc},
				}}},
			},
		},
	}
	return toml.Marshal(cfg)
}

// RegistryHosts are the registry hosts containerd pulls from the local
// registry: Registry itself and every mirror.
func (o Options) RegistryHosts() []string { return append([]string{o.Registry}, o.Mirrors...) }

// HostsFile is containerd's hosts.toml for registry host.
func (o Options) HostsFile(host string) string {
	return filepath.Join(o.CertsDir(), host, "hosts.toml")
}

// HostsTOML renders containerd's hosts.toml of every RegistryHosts entry:
// pull and resolve from the local registry over plain HTTP.
func HostsTOML(o Options) ([]byte, error) {
	return toml.Marshal(map[string]any{
		"server": "http://" + o.Registry,
		"host": map[string]any{"http://" + o.Registry: map[string]any{
			"capabilities": []string{"pull", "resolve"},
			"skip_verify":  true,
		}},
	})
}

// cniConfList is a CNI network configuration list (CNI spec 1.0.0).
type cniConfList struct {
	CNIVersion string           `json:"cniVersion"`
	Name       string           `json:"name"`
	Plugins    []map[string]any `json:"plugins"`
}

// CNIConfig renders the node's CNI network: a bridge (Bridge, gateway at
// NodeIP, masquerading traffic that leaves the pod network) with
// host-local addresses from PodCIDR, portmap for hostPorts, loopback.
func CNIConfig(o Options) ([]byte, error) {
	list := cniConfList{CNIVersion: "1.0.0", Name: "clustersync", Plugins: []map[string]any{
		{"type": "bridge", "bridge": o.Bridge, "isGateway": true, "ipMasq": true, "hairpinMode": true,
			"ipam": map[string]any{"type": "host-local", "ranges": [][]map[string]string{{{"subnet": o.PodCIDR.Masked().String(), "gateway": o.NodeIP().String()}}},
				"routes": []map[string]string{{"dst": "0.0.0.0/0"}}, "dataDir": o.path("cni", "ipam")}},
		{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		{"type": "loopback"},
	}}
	return json.MarshalIndent(list, "", "  ")
}

// KubeletConfig renders the kubelet's KubeletConfiguration. Beyond the
// addresses and ports: cgroup v1 allowed (failCgroupV1: false), swap
// allowed, cgroupfs (what containerd reports on such a machine), no local
// storage capacity isolation and no eviction thresholds (the sandbox's
// file systems are not the kubelet's to police); authentication by client
// certificate (ClientCAFile) and webhook, never anonymous; authorization by
// webhook; its serving certificate from KubeletServingCertFile; the
// read-only port closed; crashed containers restarted within
// a second (crashLoopBackOff.maxContainerRestartPeriod); pods' resolver
// from ResolvConfFile.
func KubeletConfig(o Options) ([]byte, error) {
	c := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:                      metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		Address:                       o.NodeIP().String(),
		Port:                          o.KubeletPort,
		ReadOnlyPort:                  0,
		HealthzBindAddress:            "127.0.0.1",
		HealthzPort:                   ptr.To(o.KubeletHealthzPort),
		ContainerRuntimeEndpoint:      "unix://" + o.ContainerdSocket(),
		CgroupDriver:                  "cgroupfs",
		FailCgroupV1:                  ptr.To(false),
		FailSwapOn:                    ptr.To(false),
		LocalStorageCapacityIsolation: ptr.To(false),
		ClusterDNS:                    o.ClusterDNS,
		ResolverConfig:                ptr.To(o.ResolvConfFile()),
		ClusterDomain:                 o.ClusterDomain,
		TLSCertFile:                   o.KubeletServingCertFile(),
		TLSPrivateKeyFile:             o.KubeletServingKeyFile(),
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: o.ClientCAFile},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		// A development host restarts a crashed container within a second
		// (KubeletCrashLoopBackOffMax, beta and on since 1.35), not after
		// a back-off growing to five minutes: a developer's fix, or a
		// test's fault, shows at once.
		CrashLoopBackOff: kubeletv1beta1.CrashLoopBackOffConfig{MaxContainerRestartPeriod: &metav1.Duration{Duration: time.Second}},
	}
	// evictionHard must be present and empty to turn the defaults off;
	// the typed field omits an empty map.
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["evictionHard"] = map[string]string{}
	return yaml.Marshal(m)
}

// KubeProxyConfig renders kube-proxy's KubeProxyConfiguration in iptables
// mode. The kubeconfig must be in the file (clientConnection.kubeconfig):
// with --config, the --kubeconfig flag is ignored. Conntrack limits are
// left as the machine has them (maxPerCore 0): the sandbox may not write
// them.
func KubeProxyConfig(o Options, kubeconfig string) ([]byte, error) {
	c := kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta:           metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		Mode:               "iptables",
		HostnameOverride:   o.NodeName,
		BindAddress:        o.NodeIP().String(),
		HealthzBindAddress: fmt.Sprintf("127.0.0.1:%d", o.ProxyHealthzPort),
		MetricsBindAddress: fmt.Sprintf("127.0.0.1:%d", o.ProxyMetricsPort),
		ClusterCIDR:        o.ClusterCIDR.String(),
		Conntrack:          kubeproxyv1alpha1.KubeProxyConntrackConfiguration{MaxPerCore: ptr.To[int32](0)},
	}
	c.ClientConnection.Kubeconfig = kubeconfig
	return yaml.Marshal(c)
}
