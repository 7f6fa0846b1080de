package networkpolicies

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the NetworkPolicy resource syncer.
type Syncer struct {
	syncer.Kind[*networkingv1.NetworkPolicy]
}

// New returns the NetworkPolicy syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*networkingv1.NetworkPolicy]{Plural: "networkpolicies",
		Kind:      networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"),
		NewObject: func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} }, Translator: tr}}
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*networkingv1.NetworkPolicy]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &networkingv1.NetworkPolicy{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(c.Virtual, r.Translator)})
}

// Sync implements syncer.Resource: the spec flows to the host.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*networkingv1.NetworkPolicy]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Spec = HostSpec(p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
