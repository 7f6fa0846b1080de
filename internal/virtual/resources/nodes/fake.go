// Package nodes keeps the virtual cluster's nodes. By default they are fake
// nodes: a virtual Node for each host node that runs a synced pod, removed
// when no virtual pod is bound to it any more or when the host node is gone
// (vCluster's default fromHost.nodes behaviour,
// https://github.com/loft-sh/vcluster/blob/main/pkg/controllers/resources/nodes/fake_syncer.go,
// and its issue https://github.com/loft-sh/vcluster/issues/3756 about fake
// nodes kept after their host node went). With sync.fromHost.nodes.enabled
// they are copies of the host nodes (RealController; translate.go holds its
// pure rules): which host nodes (selector), their status, and the labels and
// taints a tenant may write back to the host (syncBackChanges), as vCluster's
// real nodes (sync.fromHost.nodes of
// https://vcluster.com/docs/vcluster/configure/vcluster-yaml; its
// pkg/controllers/resources/nodes, github.com/loft-sh/vcluster).
package nodes

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// fakeLabels are the host node labels a fake node keeps: those a workload
// selects on that say nothing about the host's machines.
var fakeLabels = []string{
	"kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	"topology.kubernetes.io/region", "topology.kubernetes.io/zone",
}

// FakeNode is the virtual Node that stands for host node name: vCluster's
// fake-node capacity (16 CPUs, 32Gi memory, 100Gi ephemeral storage, 110
// pods), Ready, no taints, labelled vcluster.loft.sh/fake-node=true, its
// kubelet at kubelet (addresses and daemon endpoints; none when zero), and
// the addresses t of networking.advanced.proxyKubelets. host may be nil
// when the host node is not known.
func FakeNode(name string, host *corev1.Node, kubelet syncer.KubeletEndpoint, t TenantAddresses) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		translate.LabelFakeNode:  "true",
	}
	if host != nil {
		for _, k := range fakeLabels {
			if v, ok := host.Labels[k]; ok {
				labels[k] = v
			}
		}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("16"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
	}
	now := metav1.Now()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: maps.Clone(capacity),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "fake node of clustersync: pods run on the host node of the same name", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: binaries.KubernetesVersion, OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
	setKubelet(n, kubelet, t)
	return n
}

// TenantAddresses are the addresses at which the tenant's node exporters
// reach a fake node's kubelet (networking.advanced.proxyKubelets; the
// syncer's kubelet proxy, kubeletproxy.Tenant): Hostname
// (translate.NodeHostname, byHostname) and IP (the cluster IP of the
// node's host Service, byIP); "" for none.
type TenantAddresses struct {
	Hostname, IP string
}

// setKubelet makes node n name kubelet as its kubelet (daemon endpoint,
// and an address the virtual API server prefers, KubeletAddressTypes), or
// none when kubelet is zero, and gives it the addresses t. The proxy's
// address is the InternalIP, or with t.IP (which then is the InternalIP,
// as node exporters read it) the InternalDNS; the Hostname is t.Hostname,
// else the node's name. It reports whether n changed.
func setKubelet(n *corev1.Node, kubelet syncer.KubeletEndpoint, t TenantAddresses) bool {
	hostname := n.Name
	if t.Hostname != "" {
		hostname = t.Hostname
	}
	var addrs []corev1.NodeAddress
	switch {
	case kubelet.IP != "" && t.IP != "":
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: kubelet.IP}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: t.IP})
	case kubelet.IP != "":
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: kubelet.IP})
	case t.IP != "":
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: t.IP})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: hostname})
	if slices.Equal(n.Status.Addresses, addrs) && n.Status.DaemonEndpoints.KubeletEndpoint.Port == kubelet.Port {
		return false
	}
	n.Status.Addresses = addrs
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = kubelet.Port
	return true
}

// EnsureFake creates the fake node for host node name unless it exists,
// and points an existing one at s.Kubelet (it may have been made by a
// syncer before this one, whose kubelet was elsewhere). A copy of the host
// node left by a syncer that synced real nodes (IsCopy) becomes a fake
// node in place, so that the pods bound to it keep their node.
func EnsureFake(ctx context.Context, s *syncer.Context, name string) error {
	t, err := tenantAddresses(ctx, s, name)
	if err != nil {
		return err
	}
	var host *corev1.Node
	var h corev1.Node
	hostNode := func() *corev1.Node {
		if host == nil && s.Host.Get(ctx, types.NamespacedName{Name: name}, &h) == nil {
			host = &h
		}
		return host
	}
	var existing corev1.Node
	if err := s.Virtual.Get(ctx, types.NamespacedName{Name: name}, &existing); err == nil {
		if IsCopy(&existing) {
			_, err := update(ctx, s, &existing, FakeNode(name, hostNode(), s.Kubelet, t))
			return err
		}
		if !setKubelet(&existing, s.Kubelet, t) {
			return nil
		}
		return s.Virtual.Status().Update(ctx, &existing)
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	err = s.Virtual.Create(ctx, FakeNode(name, hostNode(), s.Kubelet, t))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// update writes virtual node cur as want (Updated): labels, annotations
// and spec, then status, each only when it changed, and reports whether it
// wrote. cur is not modified.
func update(ctx context.Context, s *syncer.Context, cur, want *corev1.Node) (bool, error) {
	out, metaChanged, statusChanged := Updated(cur, want)
	if metaChanged {
		status := out.Status
		if err := s.Virtual.Update(ctx, out); err != nil {
			return false, err
		}
		out.Status = status
	}
	if statusChanged {
		if err := s.Virtual.Status().Update(ctx, out); err != nil {
			return metaChanged, err
		}
	}
	return metaChanged || statusChanged, nil
}

// tenantAddresses are fake node name's TenantAddresses under s's
// configuration; with byIP it makes the node's host Service
// (ensureNodeService).
func tenantAddresses(ctx context.Context, s *syncer.Context, name string) (TenantAddresses, error) {
	pk := s.Config.Networking.Advanced.ProxyKubelets
	var t TenantAddresses
	if pk.ByHostname {
		t.Hostname = translate.NodeHostname(name)
	}
	if pk.ByIP {
		ip, err := ensureNodeService(ctx, s, name)
		if err != nil {
			return t, err
		}
		t.IP = ip
	}
	return t, nil
}

// ensureNodeService makes the host Service of fake node name
// (networking.advanced.proxyKubelets.byIP; Translator.NodeServiceName in
// the host namespace, labelled vcluster.loft.sh/managed-by and
// translate.LabelNodeService): port 10250 to the kubelet proxy of the
// control plane pod, which it selects as the virtual cluster's own Service
// does. It returns the Service's cluster IP, or "" when that Service
// selects no pod (the syncer runs outside the chart). A Service of that
// name the virtual cluster does not manage is left alone, and is an
// error.
func ensureNodeService(ctx context.Context, s *syncer.Context, name string) (string, error) {
	tr := s.Translator
	key := types.NamespacedName{Namespace: tr.HostNamespace, Name: tr.NodeServiceName(name)}
	var svc corev1.Service
	// The cache first (every reconcile of the node asks); the API server
	// when it has not seen a Service made just before.
	err := s.Host.Get(ctx, key, &svc)
	if apierrors.IsNotFound(err) {
		err = s.HostReader.Get(ctx, key, &svc)
	}
	switch {
	case err == nil:
		if svc.Labels[translate.LabelManagedBy] != tr.VCluster || svc.Labels[translate.LabelNodeService] != name {
			return "", fmt.Errorf("host Service %s exists and is not the kubelet Service of node %s of virtual cluster %s", key, name, tr.VCluster)
		}
		return svc.Spec.ClusterIP, nil
	case !apierrors.IsNotFound(err):
		return "", err
	}
	var own corev1.Service
	if err := s.Host.Get(ctx, types.NamespacedName{Namespace: tr.HostNamespace, Name: tr.KubernetesServiceName()}, &own); err != nil {
		return "", fmt.Errorf("read the virtual cluster's host Service for node %s's kubelet Service: %w", name, err)
	}
	if len(own.Spec.Selector) == 0 {
		return "", nil
	}
	svc = corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{
			translate.LabelManagedBy: tr.VCluster, translate.LabelNodeService: name, "vcluster.loft.sh/belongs-to": tr.VCluster,
		}},
		Spec: corev1.ServiceSpec{Selector: maps.Clone(own.Spec.Selector), Ports: []corev1.ServicePort{{
			Name: "kubelet", Port: KubeletPort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(KubeletPort),
		}}},
	}
	if err := s.Host.Create(ctx, &svc); err != nil {
		return "", fmt.Errorf("create node %s's kubelet Service: %w", name, err)
	}
	return svc.Spec.ClusterIP, nil
}

// KubeletPort is the kubelet port of the fake nodes' host Services (byIP)
// and of the control plane Service (byHostname): the kubelet's own.
const KubeletPort = 10250

// deleteNodeService deletes the host Service of fake node name (byIP), if
// the virtual cluster made it.
func deleteNodeService(ctx context.Context, s *syncer.Context, name string) error {
	tr := s.Translator
	var svc corev1.Service
	// The API server, not the cache: a Service made just before must not
	// be missed (a node goes rarely).
	err := s.HostReader.Get(ctx, types.NamespacedName{Namespace: tr.HostNamespace, Name: tr.NodeServiceName(name)}, &svc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || svc.Labels[translate.LabelManagedBy] != tr.VCluster || svc.Labels[translate.LabelNodeService] != name {
		return err
	}
	return client.IgnoreNotFound(s.Host.Delete(ctx, &svc, client.Preconditions{UID: &svc.UID}))
}
