package hostcluster

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"path/filepath"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/realnode"
)

// The local real node's fixed settings. There is one real node per
// machine (realnode.ClaimFile), so its names, ranges and ports need not
// vary.
const (
	// RealNodeName is the real node's Node name.
	RealNodeName = "clustersync-node"
	// RealNodeBridge is its pod bridge.
	RealNodeBridge = "cs0"
	// RealNodePauseTag is the tag of the sandbox image the node runs
	// (images.PauseRepository under images.DefaultRegistry, pulled from the
	// local registry).
	RealNodePauseTag = "latest"
	// RealNodeLocalPathHelperTag is the tag of its storage provisioner's
	// helper image (images.LocalPathHelperRepository, likewise).
	RealNodeLocalPathHelperTag = "latest"
)

// realNodeExtraArgs are kwokctl --extra-args of every new cluster, so that a
// real node can join it: kwok-controller plays only the nodes kwokctl
// creates (annotated kwok.x-k8s.io/node=fake) instead of every node, and
// kube-apiserver reaches kubelets by IP (the node's name does not resolve)
// with a client certificate (kwokctl gives it none; the kubelet admits no
// anonymous request), so that logs, exec and port-forward work. Pods reach
// the API server through the "kubernetes" Service, whose endpoint is the
// machine's address (kube-apiserver's advertise address), so kube-apiserver
// listens on every address, not loopback only; it admits no request
// without a client certificate or token beyond anonymous discovery.
func (c *Cluster) realNodeExtraArgs() []string {
	pkiDir := c.pkiDir()
	return []string{
		"kwok-controller=manage-all-nodes=false",
		"kwok-controller=manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"kube-apiserver=kubelet-preferred-address-types=InternalIP",
		"kube-apiserver=bind-address=0.0.0.0",
		"kube-apiserver=kubelet-client-certificate=" + filepath.Join(pkiDir, "admin.crt"),
		"kube-apiserver=kubelet-client-key=" + filepath.Join(pkiDir, "admin.key"),
		// The aggregation layer, for the node's metrics-server: kwokctl
		// already sends admin.crt as the front-proxy client certificate;
		// these publish its CA and name (extension-apiserver-
		// authentication) so aggregated API servers trust the user it
		// forwards.
		"kube-apiserver=requestheader-client-ca-file=" + filepath.Join(pkiDir, "ca.crt"),
		"kube-apiserver=requestheader-allowed-names=kwok-admin",
		"kube-apiserver=requestheader-username-headers=X-Remote-User",
		"kube-apiserver=requestheader-group-headers=X-Remote-Group",
		"kube-apiserver=requestheader-extra-headers-prefix=X-Remote-Extra-",
	}
}

// pkiDir is where kwokctl keeps the cluster's CA and admin certificate.
func (c *Cluster) pkiDir() string { return filepath.Join(c.KwokDir(), "pki") }

// RealNodeDir is the real node's state folder, Dir/node.
func (c *Cluster) RealNodeDir() string { return filepath.Join(c.Dir, "node") }

// realNodePodCIDR is the real node's pod range; the node's address (the
// bridge's) is its first address.
func realNodePodCIDR() netip.Prefix { return netip.MustParsePrefix("10.244.0.0/24") }

// RealNodeIP is the real node's address, the bridge's, which its pods reach
// this machine at (10.244.0.1).
func RealNodeIP() netip.Addr { return realNodePodCIDR().Masked().Addr().Next() }

// RealNodeOptions are the settings of the cluster's real node running the
// programs of bins, which pulls images from the local registry at
// registryAddr (host:port), also for images named ghcr.io/… and
// registry.k8s.io/… (the images of make conformance).
func (c *Cluster) RealNodeOptions(registryAddr string, bins binaries.NodeSet) realnode.Options {
	return realnode.Options{
		Dir:                  c.RealNodeDir(),
		NodeName:             RealNodeName,
		Bridge:               RealNodeBridge,
		PodCIDR:              realNodePodCIDR(),
		ClusterCIDR:          netip.MustParsePrefix("10.244.0.0/16"),
		ServiceCIDR:          serviceCIDR(c.ServiceCIDR),
		Registry:             registryAddr,
		Mirrors:              []string{images.DefaultRegistry, images.KubernetesRegistry},
		PauseImage:           images.Reference(images.DefaultRegistry, images.PauseRepository, RealNodePauseTag),
		LocalPathHelperImage: images.Reference(images.DefaultRegistry, images.LocalPathHelperRepository, RealNodeLocalPathHelperTag),
		CNIBinDir:            bins.CNIBinDir,
		Runc:                 bins.Runc,
		KubeletPort:          10250,
		KubeletHealthzPort:   10248,
		ProxyHealthzPort:     10256,
		ProxyMetricsPort:     10249,
		ClusterDomain:        "cluster.local",
	}
}

// StartRealNode starts the cluster's real node (realnode.Start), pulling
// from the local registry at registryAddr, unless it runs already. It
// returns realnode.Preflight's one-line reason when this machine cannot
// run one.
func (c *Cluster) StartRealNode(ctx context.Context, registryAddr string) error {
	if realnode.Running(c.RealNodeDir()) {
		return nil
	}
	if c.Config == nil {
		if err := c.loadConfig(); err != nil {
			return err
		}
	}
	j := realnode.Join{
		Server:     c.Server(),
		CACertFile: filepath.Join(c.pkiDir(), "ca.crt"),
		CAKeyFile:  filepath.Join(c.pkiDir(), "ca.key"),
		Admin:      c.Config,
	}
	bins := binaries.Node()
	return realnode.Start(ctx, c.RealNodeOptions(registryAddr, bins), bins, j, c.Log)
}

// StopRealNode tears the cluster's real node down (realnode.Stop); without
// one it does nothing.
func (c *Cluster) StopRealNode(ctx context.Context) error {
	return realnode.Stop(ctx, c.RealNodeDir(), c.Log)
}

// RealNodeStatus reports the real node's processes; ok is false when the
// cluster has none.
func (c *Cluster) RealNodeStatus() (s realnode.Status, ok bool, err error) {
	s, err = realnode.ReadStatus(c.RealNodeDir())
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	return s, err == nil, err
}

// serviceCIDR parses the cluster's Service range (DefaultServiceCIDR when
// empty); an unparsable one gives the zero prefix, and the node then
// rejects nothing.
func serviceCIDR(s string) netip.Prefix {
	p, err := netip.ParsePrefix(cmp.Or(s, DefaultServiceCIDR))
	if err != nil {
		return netip.Prefix{}
	}
	return p
}
