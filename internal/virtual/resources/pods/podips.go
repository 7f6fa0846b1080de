package pods

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// OwnPodIPs are the IPs of the tenant's pods as the host has them: those
// of the host pods in the host namespace labelled as this virtual
// cluster's (a label a tenant cannot set, translate.HostLabelKey), that
// have not ended (a Succeeded or Failed pod's address may go to someone
// else's pod). It is the set policy.AllowedAddresses takes.
func OwnPodIPs(ctx context.Context, s *syncer.Context) (map[netip.Addr]bool, error) {
	var list corev1.PodList
	if err := s.Host.List(ctx, &list, client.InNamespace(s.Translator.HostNamespace),
		client.MatchingLabels{translate.LabelManagedBy: s.Translator.VCluster}); err != nil {
		return nil, fmt.Errorf("the tenant's host pods: %w", err)
	}
	var ips []string
	for i := range list.Items {
		ips = append(ips, liveIPs(&list.Items[i])...)
	}
	return policy.PodIPSet(ips), nil
}

// ReportRefusedAddresses records the Warning PolicyEnforced event of a
// tenant-written Endpoints or EndpointSlice v whose addresses refused were
// left out of its host copy (policies.isolation.endpoints); none when
// refused is empty.
func ReportRefusedAddresses(s *syncer.Context, v client.Object, refused []string) {
	if len(refused) > 0 {
		s.ReportPolicy(v, "not applied on the host: addresses %s, which are not this virtual cluster's pods (policies.isolation.endpoints)",
			strings.Join(refused, ", "))
	}
}

// liveIPs are the IPs of pod p, none once it has ended.
func liveIPs(p *corev1.Pod) []string {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	return podIPs(p)
}

// WatchPodIPs adds to b a watch of the tenant's host pods for a kind whose
// objects hold addresses (Endpoints, EndpointSlices) that OwnPodIPs
// limits: when a host pod gets, changes or loses its IPs, the virtual
// objects that mention one of them — listed from the virtual cache with
// list and read with addresses — are reconciled again, so that an address
// refused before the pod had it is let through, and one whose pod is gone
// is taken out.
func WatchPodIPs[L client.ObjectList](b *builder.Builder, s *syncer.Context, host cluster.Cluster,
	list func() L, addresses func(L) map[reconcile.Request][]string) *builder.Builder {
	mapFn := func(ctx context.Context, p *corev1.Pod) []reconcile.Request {
		ips := liveIPs(p)
		if len(ips) == 0 {
			ips = podIPs(p) // ended or deleted: the objects that still name its addresses
		}
		l := list()
		if err := s.Virtual.List(ctx, l); err != nil {
			s.Log.Error(err, "list objects to recheck for a host pod's addresses", "pod", p.Name)
			return nil
		}
		var out []reconcile.Request
		for req, addrs := range addresses(l) {
			if slices.ContainsFunc(addrs, func(a string) bool { return slices.Contains(ips, a) }) {
				out = append(out, req)
			}
		}
		return out
	}
	ipsChanged := predicate.TypedFuncs[*corev1.Pod]{
		UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool {
			return !slices.Equal(liveIPs(e.ObjectOld), liveIPs(e.ObjectNew))
		},
	}
	mine := predicate.NewTypedPredicateFuncs(func(p *corev1.Pod) bool {
		return p.Labels[translate.LabelManagedBy] == s.Translator.VCluster
	})
	return b.WatchesRawSource(source.Kind(host.GetCache(), &corev1.Pod{},
		handler.TypedEnqueueRequestsFromMapFunc(mapFn), mine, ipsChanged))
}

func podIPs(p *corev1.Pod) []string {
	out := make([]string, 0, len(p.Status.PodIPs))
	for _, ip := range p.Status.PodIPs {
		out = append(out, ip.IP)
	}
	return out
}
