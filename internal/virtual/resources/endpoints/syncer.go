// Package endpoints syncs the Endpoints of selector-less virtual Services to
// the host; Services with a selector get their host Endpoints from the host's
// own controller, which sees the synced pods. Pod target references are
// renamed to the host pods.
package endpoints

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the Endpoints resource syncer.
type Syncer struct{ syncer.Kind[*corev1.Endpoints] }

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

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.Endpoints]) (ctrl.Result, error) { //nolint:staticcheck
	return c.CreateHost(ctx, s, &corev1.Endpoints{ObjectMeta: syncer.HostMeta(s, c), Subsets: HostSubsets(c.Virtual, r.Translator)}) //nolint:staticcheck
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.Endpoints]) (ctrl.Result, error) { //nolint:staticcheck
	v, h := syncer.ApplyMeta(p)
	h.Subsets = HostSubsets(p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
