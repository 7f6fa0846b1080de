package pdbs

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the PodDisruptionBudget resource syncer.
type Syncer struct {
	syncer.Kind[*policyv1.PodDisruptionBudget]
}

// New returns the PodDisruptionBudget syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*policyv1.PodDisruptionBudget]{Plural: "poddisruptionbudgets",
		Kind:      policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
		NewObject: func() *policyv1.PodDisruptionBudget { return &policyv1.PodDisruptionBudget{} }, Translator: tr}}
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*policyv1.PodDisruptionBudget]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &policyv1.PodDisruptionBudget{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(c.Virtual, r.Translator)})
}

// Sync implements syncer.Resource: the spec flows to the host, the status
// (counts and conditions; the observed generation is the virtual one's)
// back.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*policyv1.PodDisruptionBudget]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Spec = HostSpec(p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *policyv1.PodDisruptionBudget) { vs.Status = VirtualStatus(p.Host, p.Virtual.Generation) })
}

// VirtualStatus is the virtual status from the host copy's: the counts
// and conditions, DisruptedPods under no names (the host pods' names mean
// nothing in the virtual cluster), and the observed generation the
// virtual object's when the host has seen its current spec.
func VirtualStatus(host *policyv1.PodDisruptionBudget, virtualGeneration int64) policyv1.PodDisruptionBudgetStatus {
	st := *host.Status.DeepCopy()
	st.DisruptedPods = nil
	if host.Status.ObservedGeneration == host.Generation {
		st.ObservedGeneration = virtualGeneration
	} else {
		st.ObservedGeneration = 0
	}
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = st.ObservedGeneration
	}
	return st
}
