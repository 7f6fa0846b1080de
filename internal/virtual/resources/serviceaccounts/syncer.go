package serviceaccounts

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the ServiceAccount resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.ServiceAccount]
}

// New returns the ServiceAccount syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.ServiceAccount]{Plural: "serviceaccounts", Kind: corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		NewObject: func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }, Translator: tr}}
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.ServiceAccount]) (ctrl.Result, error) {
	s.SetReferences(ctx, Ref(c.Virtual), References(c.Virtual))
	h := &corev1.ServiceAccount{ObjectMeta: syncer.HostMeta(s, c)}
	HostFields(h, c.Virtual, r.Translator)
	return c.CreateHost(ctx, s, h)
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.ServiceAccount]) (ctrl.Result, error) {
	s.SetReferences(ctx, Ref(p.Virtual), References(p.Virtual))
	v, h := syncer.ApplyMeta(p)
	HostFields(h, p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
