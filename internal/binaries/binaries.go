// Package binaries locates the etcd, Kubernetes and kwok binaries that
// hack/build-binaries.sh builds into the version-keyed cache, so the CLI and
// the tests find them without any PATH set-up.
package binaries

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Pinned versions; hack/build-binaries.sh uses the same values.
const (
	// EtcdVersion is the etcd server version (the one Kubernetes 1.37.0 uses).
	EtcdVersion = "v3.7.0"
	// KubernetesVersion is the version of kube-apiserver, kube-controller-manager
	// and kube-scheduler.
	KubernetesVersion = "v1.37.0"
	// KwokVersion is the version of kwok and kwokctl.
	KwokVersion = "v0.8.0"
)

// Set is the absolute paths of every binary clustersync runs.
type Set struct {
	Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok, Kwokctl string
	// KubeAPIServerK3s is the same kube-apiserver reporting version
	// "<version>+k3s1", for the K3s detection tests of registered clusters.
	KubeAPIServerK3s string
}

// CacheDir is the folder the binaries are cached in: $CLUSTERSYNC_CACHE, else
// $XDG_CACHE_HOME/clustersync, else ~/.cache/clustersync.
func CacheDir() string {
	if d := os.Getenv("CLUSTERSYNC_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "clustersync")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "clustersync-cache")
	}
	return filepath.Join(home, ".cache", "clustersync")
}

// Default is the Set in CacheDir, each path overridable by its environment
// variable (CLUSTERSYNC_ETCD_BIN, CLUSTERSYNC_KUBE_APISERVER_BIN,
// CLUSTERSYNC_KUBE_CONTROLLER_MANAGER_BIN, CLUSTERSYNC_KUBE_SCHEDULER_BIN,
// CLUSTERSYNC_KWOK_BIN, CLUSTERSYNC_KWOKCTL_BIN,
// CLUSTERSYNC_KUBE_APISERVER_K3S_BIN).
func Default() Set {
	c := CacheDir()
	pick := func(env, dir, name string) string {
		if p := os.Getenv(env); p != "" {
			return p
		}
		return filepath.Join(c, dir, name)
	}
	kube := "kubernetes-" + KubernetesVersion + "-static"
	kwok := "kwok-" + KwokVersion
	return Set{
		Etcd:                  pick("CLUSTERSYNC_ETCD_BIN", "etcd-"+EtcdVersion, "etcd"),
		KubeAPIServer:         pick("CLUSTERSYNC_KUBE_APISERVER_BIN", kube, "kube-apiserver"),
		KubeControllerManager: pick("CLUSTERSYNC_KUBE_CONTROLLER_MANAGER_BIN", kube, "kube-controller-manager"),
		KubeScheduler:         pick("CLUSTERSYNC_KUBE_SCHEDULER_BIN", kube, "kube-scheduler"),
		Kwok:                  pick("CLUSTERSYNC_KWOK_BIN", kwok, "kwok"),
		Kwokctl:               pick("CLUSTERSYNC_KWOKCTL_BIN", kwok, "kwokctl"),
		KubeAPIServerK3s:      pick("CLUSTERSYNC_KUBE_APISERVER_K3S_BIN", "kubernetes-"+KubernetesVersion+"-k3s1", "kube-apiserver"),
	}
}

// Check returns an error naming every binary of s a local cluster runs
// that is missing or not executable, with the command that builds them.
// KubeAPIServerK3s, which only the K3s tests run, is checked by CheckK3s.
func (s Set) Check() error {
	return checkExecutables("run `make binaries` (hack/build-binaries.sh) first", s.Etcd, s.KubeAPIServer, s.KubeControllerManager, s.KubeScheduler, s.Kwok, s.Kwokctl)
}

// CheckK3s returns an error when KubeAPIServerK3s is missing or not
// executable, with the command that builds it; an empty path is not checked
// (a Set made by hand for a test without K3s).
func (s Set) CheckK3s() error {
	if s.KubeAPIServerK3s == "" {
		return nil
	}
	return checkExecutables("run `make binaries` (hack/build-binaries.sh builds it after the static control plane)", s.KubeAPIServerK3s)
}

// checkExecutables returns an error naming each of paths that is missing or
// not executable, followed by fix.
func checkExecutables(fix string, paths ...string) error {
	var missing []string
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing binaries %v: %s", missing, fix)
	}
	return nil
}

// Versions of the local real node's runtime, pinned like the others;
// hack/build-binaries.sh and hack/tools/node/go.mod use the same values.
const (
	// ContainerdVersion is the containerd (and runc shim) version.
	ContainerdVersion = "v2.4.2"
	// CNIPluginsVersion is the version of the bridge, host-local, loopback
	// and portmap CNI plugins.
	CNIPluginsVersion = "v1.9.1"
	// LocalPathProvisionerVersion is rancher/local-path-provisioner's
	// (hack/tools/localpath/go.mod).
	LocalPathProvisionerVersion = "v0.0.30"
	// MetricsServerVersion is kubernetes-sigs/metrics-server's
	// (hack/tools/metricsserver/go.mod).
	MetricsServerVersion = "v0.9.0"
	// BusyboxVersion is the version of Debian's busybox-static package
	// (bookworm) that hack/build-binaries.sh unpacks into the cache.
	BusyboxVersion = "1.35.0"
)

// NodeSet is the absolute paths of the programs of a real node. Containerd,
// Shim and CNIBinDir's plugins are built by hack/build-binaries.sh from the
// Go module proxy, Kubelet and KubeProxy from the pinned Kubernetes tools
// module; Runc and Iptables are Debian's, found on PATH ("" when missing).
type NodeSet struct {
	Containerd, Shim, CNIBinDir, Kubelet, KubeProxy string
	// LocalPathProvisioner is rancher/local-path-provisioner, the node's
	// storage (LocalPathProvisionerVersion), built from hack/tools/localpath.
	LocalPathProvisioner string
	// MetricsServer is kubernetes-sigs/metrics-server, the host's resource
	// metrics API (MetricsServerVersion), built from hack/tools/metricsserver
	// by `make binaries` (not by `make run-binaries`). Check does not
	// require it: without it the node runs and `kubectl top` does not work.
	MetricsServer string
	// Busybox is Debian's statically linked busybox (BusyboxVersion), the
	// binary of the rewrite-hosts image of virtual clusters' StatefulSet
	// pods (internal/images.Busybox). Check does not require it: the node
	// runs without it.
	Busybox        string
	Runc, Iptables string
}

// Node is the NodeSet in CacheDir, the folders overridable by
// CLUSTERSYNC_NODE_DIR (containerd, its shim and cni/) and
// CLUSTERSYNC_KUBE_NODE_DIR (kubelet, kube-proxy).
func Node() NodeSet {
	nodeDir := os.Getenv("CLUSTERSYNC_NODE_DIR")
	if nodeDir == "" {
		nodeDir = filepath.Join(CacheDir(), "node-containerd-"+ContainerdVersion+"-cni-"+CNIPluginsVersion)
	}
	kubeNodeDir := os.Getenv("CLUSTERSYNC_KUBE_NODE_DIR")
	if kubeNodeDir == "" {
		kubeNodeDir = filepath.Join(CacheDir(), "kubernetes-"+KubernetesVersion+"-node")
	}
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			return ""
		}
		return p
	}
	return NodeSet{
		Containerd:           filepath.Join(nodeDir, "containerd"),
		Shim:                 filepath.Join(nodeDir, "containerd-shim-runc-v2"),
		CNIBinDir:            filepath.Join(nodeDir, "cni"),
		Kubelet:              filepath.Join(kubeNodeDir, "kubelet"),
		KubeProxy:            filepath.Join(kubeNodeDir, "kube-proxy"),
		LocalPathProvisioner: filepath.Join(CacheDir(), "local-path-provisioner-"+LocalPathProvisionerVersion, "local-path-provisioner"),
		MetricsServer:        filepath.Join(CacheDir(), "metrics-server-"+MetricsServerVersion, "metrics-server"),
		Busybox:              filepath.Join(CacheDir(), "busybox-static-"+BusyboxVersion, "busybox"),
		Runc:                 look("runc"),
		Iptables:             look("iptables"),
	}
}

// Check returns an error naming what of s is missing, in one line, with
// the command that provides it.
func (s NodeSet) Check() error {
	var missing []string
	for _, p := range []string{s.Containerd, s.Shim, filepath.Join(s.CNIBinDir, "bridge"), filepath.Join(s.CNIBinDir, "host-local"),
		filepath.Join(s.CNIBinDir, "loopback"), filepath.Join(s.CNIBinDir, "portmap"), s.Kubelet, s.KubeProxy, s.LocalPathProvisioner} {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %v: run `make binaries` (hack/build-binaries.sh node)", missing)
	}
	var tools []string
	if s.Runc == "" {
		tools = append(tools, "runc")
	}
	if s.Iptables == "" {
		tools = append(tools, "iptables")
	}
	if len(tools) > 0 {
		return fmt.Errorf("%v not on PATH: run `make binaries` as root (it installs Debian's packages)", tools)
	}
	return nil
}

// UserlandVersion names the Debian userlands of the conformance images
// that hack/conformance-rootfs.sh builds (Debian 12, the script's first
// version); hack/build-binaries.sh uses the same value.
const UserlandVersion = "debian12-v4"

// ConformanceSet is the absolute paths of what `make conformance` runs and
// builds images from (hack/build-binaries.sh conformance): the Kubernetes
// end-to-end suite of KubernetesVersion and the inputs of the images its
// [Conformance] tests pull (internal/images.Conformance).
type ConformanceSet struct {
	// E2ETest is the test binary of k8s.io/kubernetes/test/e2e.
	E2ETest string
	// Ginkgo is the ginkgo command, which runs E2ETest in parallel
	// processes.
	Ginkgo string
	// Kubectl is kubectl, which the [sig-cli] tests call from PATH.
	Kubectl string
	// Agnhost, Nonewprivs, SampleAPIServer and Etcd are the static
	// programs of the images of those names
	// (k8s.io/kubernetes/test/images/agnhost, …/nonewprivs,
	// k8s.io/sample-apiserver, etcd EtcdVersion without cgo).
	Agnhost, Nonewprivs, SampleAPIServer, Etcd string
	// Files is the folder of the files the images carry besides programs:
	// porter/localhost.{crt,key} (agnhost), nautilus/ and kitten/ (the
	// pages of those images); and conformance.yaml, the suite's list of
	// its [Conformance] specs (ConformanceList).
	Files string
	// Userland is the folder of the Debian userlands
	// (hack/conformance-rootfs.sh): busybox/, agnhost/, nginx/ and
	// glibc-dns-testing/, each a root file system.
	Userland string
}

// Conformance is the ConformanceSet in CacheDir; CLUSTERSYNC_E2E_DIR
// overrides the folder of the suite and the programs,
// CLUSTERSYNC_USERLAND_DIR the userlands'.
func Conformance() ConformanceSet {
	dir := os.Getenv("CLUSTERSYNC_E2E_DIR")
	if dir == "" {
		dir = filepath.Join(CacheDir(), "kubernetes-"+KubernetesVersion+"-e2e")
	}
	userland := os.Getenv("CLUSTERSYNC_USERLAND_DIR")
	if userland == "" {
		userland = filepath.Join(CacheDir(), "conformance-userland-"+UserlandVersion)
	}
	return ConformanceSet{
		E2ETest:         filepath.Join(dir, "e2e.test"),
		Ginkgo:          filepath.Join(dir, "ginkgo"),
		Kubectl:         filepath.Join(dir, "kubectl"),
		Agnhost:         filepath.Join(dir, "agnhost"),
		Nonewprivs:      filepath.Join(dir, "nonewprivs"),
		SampleAPIServer: filepath.Join(dir, "sample-apiserver"),
		Etcd:            filepath.Join(dir, "etcd"),
		Files:           filepath.Join(dir, "files"),
		Userland:        userland,
	}
}

// ConformanceList is the suite's list of its [Conformance] specs,
// k8s.io/kubernetes's test/conformance/testdata/conformance.yaml of
// KubernetesVersion: one entry per spec, its full name in "codename".
func (s ConformanceSet) ConformanceList() string { return filepath.Join(s.Files, "conformance.yaml") }

// Check returns an error naming what of s is missing, in one line, with
// the command that builds it.
func (s ConformanceSet) Check() error {
	fix := "run `hack/build-binaries.sh conformance` (make conformance runs it)"
	if err := checkExecutables(fix, s.E2ETest, s.Ginkgo, s.Kubectl, s.Agnhost, s.Nonewprivs, s.SampleAPIServer, s.Etcd); err != nil {
		return err
	}
	var missing []string
	for _, p := range []string{filepath.Join(s.Files, "porter", "localhost.crt"), filepath.Join(s.Files, "nautilus"), filepath.Join(s.Files, "kitten"), s.ConformanceList(),
		filepath.Join(s.Userland, "busybox"), filepath.Join(s.Userland, "agnhost"), filepath.Join(s.Userland, "nginx"), filepath.Join(s.Userland, "glibc-dns-testing")} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %v: %s", missing, fix)
	}
	return nil
}

// ReleaseSet is the absolute paths of what the images of a release are
// built from besides the source tree (hack/build-binaries.sh release), for
// each architecture of a release ("amd64", "arm64"): the static control
// plane of the clustersync image and Debian's busybox-static of the busybox
// image; and Debian's qemu-aarch64-static, which starts the arm64
// images' programs on an amd64 machine.
type ReleaseSet struct {
	// ControlPlane maps an architecture to its static kube-apiserver,
	// kube-controller-manager and kube-scheduler.
	ControlPlane map[string][]string
	// Busybox maps an architecture to its busybox-static.
	Busybox map[string]string
	// QemuAarch64 is qemu-aarch64-static: Debian's qemu-user-static
	// unpacked into the cache, else the one on PATH, else "" (Check does
	// not require it).
	QemuAarch64 string
}

// Release is the ReleaseSet in CacheDir. CLUSTERSYNC_STATIC_KUBE_DIR and
// CLUSTERSYNC_STATIC_KUBE_DIR_ARM64 override the control planes' folders,
// CLUSTERSYNC_BUSYBOX_ARM64_BIN the arm64 busybox, CLUSTERSYNC_QEMU_AARCH64_BIN
// the emulator; the amd64 busybox is Node's.
func Release() ReleaseSet {
	controlPlane := func(env, suffix string) []string {
		dir := os.Getenv(env)
		if dir == "" {
			dir = filepath.Join(CacheDir(), "kubernetes-"+KubernetesVersion+"-static"+suffix)
		}
		return []string{filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "kube-controller-manager"), filepath.Join(dir, "kube-scheduler")}
	}
	qemu := cmp.Or(os.Getenv("CLUSTERSYNC_QEMU_AARCH64_BIN"), filepath.Join(CacheDir(), "qemu-user-static-debian12", "qemu-aarch64-static"))
	if _, err := os.Stat(qemu); err != nil {
		qemu, _ = exec.LookPath("qemu-aarch64-static") // Debian's package, installed; "" without
	}
	return ReleaseSet{
		ControlPlane: map[string][]string{
			"amd64": controlPlane("CLUSTERSYNC_STATIC_KUBE_DIR", ""),
			"arm64": controlPlane("CLUSTERSYNC_STATIC_KUBE_DIR_ARM64", "-arm64"),
		},
		Busybox: map[string]string{
			"amd64": Node().Busybox,
			"arm64": cmp.Or(os.Getenv("CLUSTERSYNC_BUSYBOX_ARM64_BIN"), filepath.Join(CacheDir(), "busybox-static-"+BusyboxVersion+"-arm64", "busybox")),
		},
		QemuAarch64: qemu,
	}
}

// Check returns an error naming every control-plane or busybox binary of
// s for arches ("amd64", "arm64") that is missing, with the command that
// builds them (arm64's control plane is a cross-compile of 15-25 minutes
// on 2 cores).
func (s ReleaseSet) Check(arches ...string) error {
	var paths []string
	for _, arch := range arches {
		paths = append(append(paths, s.ControlPlane[arch]...), s.Busybox[arch])
	}
	return checkExecutables("run `hack/build-binaries.sh release` (make release runs it; the arm64 control plane takes 15-25 minutes on 2 cores the first time)", paths...)
}
