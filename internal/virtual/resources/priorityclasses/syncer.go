package priorityclasses

import (
	"context"

	schedulingv1 "k8s.io/api/scheduling/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the PriorityClass resource syncer.
type Syncer struct {
	syncer.Kind[*schedulingv1.PriorityClass]
}

// New returns the PriorityClass syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*schedulingv1.PriorityClass]{Plural: "priorityclasses",
		Kind:      schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"),
		NewObject: func() *schedulingv1.PriorityClass { return &schedulingv1.PriorityClass{} }, Translator: tr, ClusterScoped: true}}
}

// ShouldSync implements syncer.Selector: system classes and copies of host
// classes stay in the virtual cluster.
func (r *Syncer) ShouldSync(_ context.Context, _ *syncer.Context, v *schedulingv1.PriorityClass) bool {
	return Synced(v)
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*schedulingv1.PriorityClass]) (ctrl.Result, error) {
	h := &schedulingv1.PriorityClass{ObjectMeta: syncer.HostMeta(s, c)}
	HostSpec(c.Virtual).Apply(h)
	return c.CreateHost(ctx, s, h)
}

// Sync implements syncer.Resource. A changed value or preemption policy
// (immutable on the API server) replaces the host copy.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*schedulingv1.PriorityClass]) (ctrl.Result, error) {
	spec := HostSpec(p.Virtual)
	if spec.Immutable(p.Host) {
		if err := s.DeleteHost(ctx, p.Host); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: syncer.ConflictRetry}, nil
	}
	v, h := syncer.ApplyMeta(p)
	spec.Apply(h)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
