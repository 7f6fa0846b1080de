// Package endpoints syncs the Endpoints of selector-less virtual Services to
// the host; Services with a selector get their host Endpoints from the host's
// own controller, which sees the synced pods. Pod target references are
// renamed to the host pods.
package endpoints

import (
	"context"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the Endpoints resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.Endpoints]
	// RestrictAddresses keeps on the host only the addresses of the
	// tenant's own pods (policies.isolation.endpoints, pods.OwnPodIPs).
	RestrictAddresses bool
}

// New returns the Endpoints syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.Endpoints]{Plural: "endpoints", Kind: corev1.SchemeGroupVersion.WithKind("Endpoints"),
		NewObject: func() *corev1.Endpoints { return &corev1.Endpoints{} }, Translator: tr}}
}

// ShouldSync implements syncer.Selector: only Endpoints whose Service has no
// selector (or that have no Service yet), never default/kubernetes.
func (r *Syncer) ShouldSync(ctx context.Context, s *syncer.Context, v *corev1.Endpoints) bool { //nolint:staticcheck
	if v.Namespace == "default" && v.Name == "kubernetes" {
		return false
	}
	var svc corev1.Service
	if err := s.Virtual.Get(ctx, types.NamespacedName{Namespace: v.Namespace, Name: v.Name}, &svc); err != nil {
		return true
	}
	return len(svc.Spec.Selector) == 0
}

// HostSubsets translates the subsets of a virtual Endpoints: pod target
// references point at the host pods.
func HostSubsets(v *corev1.Endpoints, tr translate.Translator) []corev1.EndpointSubset { //nolint:staticcheck
	subsets := make([]corev1.EndpointSubset, len(v.Subsets)) //nolint:staticcheck
	for i := range v.Subsets {
		subsets[i] = *v.Subsets[i].DeepCopy()
		for _, addrs := range [][]corev1.EndpointAddress{subsets[i].Addresses, subsets[i].NotReadyAddresses} { //nolint:staticcheck
			for j := range addrs {
				if ref := addrs[j].TargetRef; ref != nil && ref.Kind == "Pod" {
					ns := ref.Namespace
					if ns == "" {
						ns = v.Namespace
					}
					ref.Name, ref.Namespace, ref.UID, ref.ResourceVersion = tr.HostName(ref.Name, ns), tr.HostNamespace, "", ""
				}
			}
		}
	}
	return subsets
}

// RestrictSubsets keeps in subsets only the addresses policy.AllowedAddresses
// allows for own (the tenant's pod IPs); refused lists the others, in
// order. A subset left with no address is dropped. subsets is not
// modified.
func RestrictSubsets(subsets []corev1.EndpointSubset, own map[netip.Addr]bool) (kept []corev1.EndpointSubset, refused []string) { //nolint:staticcheck
	keep := func(addrs []corev1.EndpointAddress) []corev1.EndpointAddress { //nolint:staticcheck
		var out []corev1.EndpointAddress //nolint:staticcheck
		for _, a := range addrs {
			if ok, no := policy.AllowedAddresses([]string{a.IP}, own); len(ok) > 0 {
				out = append(out, a)
			} else {
				refused = append(refused, no...)
			}
		}
		return out
	}
	for _, sub := range subsets {
		sub = *sub.DeepCopy()
		sub.Addresses, sub.NotReadyAddresses = keep(sub.Addresses), keep(sub.NotReadyAddresses)
		if len(sub.Addresses)+len(sub.NotReadyAddresses) > 0 {
			kept = append(kept, sub)
		}
	}
	return kept, refused
}

// hostSubsets are the host copy's subsets: HostSubsets, restricted to the
// tenant's own pods when RestrictAddresses, with a Warning PolicyEnforced
// event naming the addresses left out.
func (r *Syncer) hostSubsets(ctx context.Context, s *syncer.Context, v *corev1.Endpoints) ([]corev1.EndpointSubset, error) { //nolint:staticcheck
	subsets := HostSubsets(v, r.Translator)
	if !r.RestrictAddresses {
		return subsets, nil
	}
	own, err := pods.OwnPodIPs(ctx, s)
	if err != nil {
		return nil, err
	}
	subsets, refused := RestrictSubsets(subsets, own)
	pods.ReportRefusedAddresses(s, v, refused)
	return subsets, nil
}

// Watch implements syncer.Watcher: with RestrictAddresses, an Endpoints
// is checked again when a pod whose IP it names gets or loses it.
func (r *Syncer) Watch(b *builder.Builder, s *syncer.Context, host cluster.Cluster) *builder.Builder {
	if !r.RestrictAddresses {
		return b
	}
	return pods.WatchPodIPs(b, s, host, func() *corev1.EndpointsList { return &corev1.EndpointsList{} }, //nolint:staticcheck
		func(l *corev1.EndpointsList) map[reconcile.Request][]string { //nolint:staticcheck
			out := map[reconcile.Request][]string{}
			for _, e := range l.Items {
				req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Namespace, Name: e.Name}}
				for _, sub := range e.Subsets {
					for _, a := range append(slices.Clip(sub.Addresses), sub.NotReadyAddresses...) {
						out[req] = append(out[req], a.IP)
					}
				}
			}
			return out
		})
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.Endpoints]) (ctrl.Result, error) { //nolint:staticcheck
	subsets, err := r.hostSubsets(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	return c.CreateHost(ctx, s, &corev1.Endpoints{ObjectMeta: syncer.HostMeta(s, c), Subsets: subsets}) //nolint:staticcheck
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.Endpoints]) (ctrl.Result, error) { //nolint:staticcheck
	subsets, err := r.hostSubsets(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, h := syncer.ApplyMeta(p)
	h.Subsets = subsets
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
