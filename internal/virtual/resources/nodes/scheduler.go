package nodes

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// With the virtual scheduler (controlPlane.advanced.virtualScheduler), the
// virtual copies of the host's nodes are what the virtual cluster's
// kube-scheduler places pods on. They differ from the host node in three
// ways, so that it places them where the host's kubelet then runs them:
//   - the labels and taints the tenant gave a copy stay on it (Merge
//     against the last sync), and reach the host only with
//     syncBackChanges;
//   - the extended resources the tenant added to a copy's status (the way
//     https://kubernetes.io/docs/tasks/administer-cluster/extended-resource-node/
//     advertises them) stay on it (TenantResources);
//   - its allocatable is the host node's less what the host's other pods
//     request (Allocatable): the virtual scheduler sees only the tenant's
//     own pods.

// HostPodNodeIndex is the field index on the cache of every host pod
// (scheduler's hostPods) by spec.nodeName.
const HostPodNodeIndex = "spec.nodeName"

// Allocatable is a virtual copy's status.allocatable: host, the host
// node's, less the requests of pods (the host pods bound to it that are
// not the virtual cluster's, see Foreign) that have not ended, each
// request as Kubernetes' scheduler counts it (init containers, sidecars,
// overhead, pod-level resources: k8s.io/component-helpers/resource), never
// below zero. Resources no pod asks for keep the host's value. host is not
// modified.
func Allocatable(host corev1.ResourceList, pods []corev1.Pod) corev1.ResourceList {
	out := host.DeepCopy()
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			have, ok := out[name]
			if !ok {
				continue
			}
			have.Sub(q)
			if have.Sign() < 0 {
				have = *resource.NewQuantity(0, have.Format)
			}
			out[name] = have
		}
	}
	return out
}

// Foreign reports whether host pod p is not one of the virtual cluster's
// own: not a copy the syncer made in hostNamespace for virtual cluster
// vcluster (label vcluster.loft.sh/managed-by). The control plane's pod is
// foreign too: the virtual cluster does not see it.
func Foreign(p *corev1.Pod, hostNamespace, vcluster string) bool {
	return p.Namespace != hostNamespace || p.Labels[translate.LabelManagedBy] != vcluster
}

// IsExtended reports whether name is an extended resource: a name with a
// domain other than Kubernetes' own (kubernetes.io, *.kubernetes.io), as
// https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#extended-resources
// defines them.
func IsExtended(name corev1.ResourceName) bool {
	n := string(name)
	domain, _, ok := strings.Cut(n, "/")
	return ok && domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

// TenantResources are the entries of virtual, a virtual copy's capacity or
// allocatable, that the tenant added: extended resources (IsExtended)
// the host node does not have (host) and did not have at the pair's last
// sync (base; nil when not known: then every extended resource the host
// lacks is taken as the tenant's). Nil when there are none.
func TenantResources(base []corev1.ResourceName, virtual, host corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range virtual {
		if _, onHost := host[name]; onHost || !IsExtended(name) || slices.Contains(base, name) {
			continue
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[name] = q.DeepCopy()
	}
	return out
}

// resourceNames are the names of list, sorted.
func resourceNames(list corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(list))
}

// schedulerView changes want, the VirtualNode of host node host, into
// what the virtual scheduler reads: allocatable less the foreign pods'
// requests, and the tenant's extended resources of cur (the virtual copy
// now; nil when there is none yet) kept in capacity and allocatable.
// base are the host's capacity names at the last sync (nil: not known).
func schedulerView(want, cur, host *corev1.Node, foreign []corev1.Pod, base []corev1.ResourceName) {
	want.Status.Allocatable = Allocatable(host.Status.Allocatable, foreign)
	if cur == nil {
		return
	}
	for _, pair := range []struct{ into, from, host corev1.ResourceList }{
		{want.Status.Capacity, cur.Status.Capacity, host.Status.Capacity},
		{want.Status.Allocatable, cur.Status.Allocatable, host.Status.Allocatable},
	} {
		if pair.into == nil {
			continue
		}
		maps.Copy(pair.into, TenantResources(base, pair.from, pair.host))
	}
}

// hostPodsOn lists the foreign host pods (Foreign) bound to node name from
// the cache of every host pod.
func (c *RealController) hostPodsOn(ctx context.Context, name string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := c.hostPods.List(ctx, &list, client.MatchingFields{HostPodNodeIndex: name}); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		return !Foreign(&p, c.s.Translator.HostNamespace, c.s.Translator.VCluster)
	}), nil
}

// hostPodSource wakes the node controller for node N whenever a host pod
// bound to N changes, from hostPods, a cache of every host pod that
// already has HostPodNodeIndex.
func hostPodSource(hostPods cache.Cache) source.Source {
	return source.Kind(hostPods, &corev1.Pod{}, handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, p *corev1.Pod) []reconcile.Request {
		if p.Spec.NodeName == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: p.Spec.NodeName}}}
	}))
}

// IndexHostPods adds HostPodNodeIndex to hostPods, a cache of every host
// pod.
func IndexHostPods(ctx context.Context, hostPods cache.Cache) error {
	return hostPods.IndexField(ctx, &corev1.Pod{}, HostPodNodeIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	})
}

// HostPodTransform keeps of a host pod in the cache of every host pod only
// what Allocatable, Foreign and the node index read: its name, namespace,
// labels, node, containers' resources and restart policy, overhead,
// pod-level resources and phase. On a big host the cache holds every pod.
func HostPodTransform(o any) (any, error) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return o, nil
	}
	slim := &corev1.Pod{}
	slim.Name, slim.Namespace, slim.UID, slim.ResourceVersion, slim.Labels = p.Name, p.Namespace, p.UID, p.ResourceVersion, p.Labels
	slim.Spec.NodeName, slim.Spec.Overhead, slim.Spec.Resources = p.Spec.NodeName, p.Spec.Overhead, p.Spec.Resources
	keep := func(cs []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	slim.Spec.Containers, slim.Spec.InitContainers = keep(p.Spec.Containers), keep(p.Spec.InitContainers)
	slim.Status.Phase = p.Status.Phase
	return slim, nil
}
