package ingresses

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the Ingress resource syncer.
type Syncer struct {
	syncer.Kind[*networkingv1.Ingress]
}

// New returns the Ingress syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*networkingv1.Ingress]{Plural: "ingresses", Kind: networkingv1.SchemeGroupVersion.WithKind("Ingress"),
		NewObject: func() *networkingv1.Ingress { return &networkingv1.Ingress{} }, Translator: tr}}
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*networkingv1.Ingress]) (ctrl.Result, error) {
	s.SetReferences(ctx, Ref(c.Virtual), References(c.Virtual))
	host := &networkingv1.Ingress{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(c.Virtual, r.Translator)}
	return c.CreateHost(ctx, s, host)
}

// Sync implements syncer.Resource: the spec flows to the host, the status
// back.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*networkingv1.Ingress]) (ctrl.Result, error) {
	s.SetReferences(ctx, Ref(p.Virtual), References(p.Virtual))
	v, h := syncer.ApplyMeta(p)
	h.Spec = HostSpec(p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *networkingv1.Ingress) { vs.Status = *p.Host.Status.DeepCopy() })
}
