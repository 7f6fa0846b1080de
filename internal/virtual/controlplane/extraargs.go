package controlplane

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// ExtraArgs are flags added to the Kubernetes components' own
// (controlPlane.distro.k8s.*.extraArgs), after them, so that a flag given
// twice takes the extra value, and applied to the embedded etcd
// (controlPlane.backingStore.etcd.embedded).
type ExtraArgs struct {
	// APIServer are kube-apiserver's.
	APIServer []string
	// ControllerManager are kube-controller-manager's.
	ControllerManager []string
	// Scheduler are kube-scheduler's (the virtual scheduler).
	Scheduler []string
	// Etcd are the embedded etcd's (CheckEtcdArgs): --snapshot-count of
	// snapshotCount, then extraArgs.
	Etcd []string
}

// ExtraArgsOf are the components' extra flags of cfg
// (controlPlane.distro.k8s.*.extraArgs).
func ExtraArgsOf(cfg *config.Config) ExtraArgs {
	k := cfg.ControlPlane.Distro.K8S
	e := ExtraArgs{APIServer: k.APIServer.ExtraArgs, ControllerManager: k.ControllerManager.ExtraArgs, Scheduler: k.Scheduler.ExtraArgs}
	embedded := cfg.ControlPlane.BackingStore.Etcd.Embedded
	if embedded.SnapshotCount > 0 {
		e.Etcd = append(e.Etcd, fmt.Sprintf("--snapshot-count=%d", embedded.SnapshotCount))
	}
	e.Etcd = append(e.Etcd, embedded.ExtraArgs...)
	return e
}

// ownedFlags are, per component, the flags the control plane sets and needs
// as they are: where etcd and the certificates are, what it listens on, the
// service range, the kubeconfig and leader election of a single replica.
// An extra argument may not give them.
func ownedFlags() map[string][]string {
	component := []string{"kubeconfig", "authentication-kubeconfig", "authorization-kubeconfig", "bind-address", "secure-port", "leader-elect"}
	return map[string][]string{
		"apiServer": {"bind-address", "advertise-address", "secure-port", "etcd-servers", "etcd-cafile", "etcd-certfile", "etcd-keyfile",
			"etcd-prefix", "tls-cert-file", "tls-private-key-file", "client-ca-file", "service-account-key-file",
			"service-account-signing-key-file", "service-cluster-ip-range", "endpoint-reconciler-type", "kubelet-client-certificate",
			"kubelet-client-key", "kubelet-certificate-authority", "requestheader-client-ca-file", "requestheader-allowed-names",
			"proxy-client-cert-file", "proxy-client-key-file"},
		"controllerManager": append(slices.Clone(component), "controllers", "service-account-private-key-file", "root-ca-file",
			"cluster-signing-cert-file", "cluster-signing-key-file"),
		"scheduler": component,
		// The embedded etcd's data, name and cluster, certificates and log.
		"etcd": {"data-dir", "wal-dir", "name", "initial-cluster", "initial-cluster-token",
			"cert-file", "key-file", "trusted-ca-file", "client-cert-auth", "auto-tls", "peer-cert-file", "peer-key-file",
			"peer-trusted-ca-file", "peer-client-cert-auth", "peer-auto-tls", "log-outputs", "logger"},
	}
}

// CheckExtraArgs returns one problem per extra argument of component
// ("apiServer", "controllerManager", "scheduler" or "etcd") that is not a flag
// (--name or --name=value) or gives a flag the control plane owns; each
// names the argument's index and says why.
func CheckExtraArgs(component string, args []string) []string {
	owned := ownedFlags()[component]
	var out []string
	for i, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch {
		case !strings.HasPrefix(a, "--") || name == "":
			out = append(out, fmt.Sprintf("[%d]: %q is not a flag (--name=value)", i, a))
		case slices.Contains(owned, name):
			out = append(out, fmt.Sprintf("[%d]: --%s is set by clustersync's control plane, which needs it as it is", i, name))
		}
	}
	return out
}
