// Package pvcs syncs virtual PersistentVolumeClaims to the host. The host
// binds and provisions; its status (phase, capacity, conditions) and volume
// name flow back to the virtual claim, and a resize requested in the virtual
// cluster (resources.requests) flows to the host. A host claim outlives a
// UID mismatch, since deleting it would delete data.
package pvcs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the PersistentVolumeClaim resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.PersistentVolumeClaim]
}

// New returns the PersistentVolumeClaim syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.PersistentVolumeClaim]{Plural: "persistentvolumeclaims", Kind: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
		NewObject: func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }, Translator: tr}}
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }

// KeepOnUIDMismatch implements syncer.UIDPolicy.
func (r *Syncer) KeepOnUIDMismatch() bool { return true }

// HostSpec is the host spec of virtual claim v: data sources that name
// other claims or snapshots in the virtual namespace are renamed, the volume
// name is left to the host's binder.
func HostSpec(v *corev1.PersistentVolumeClaim, tr translate.Translator) corev1.PersistentVolumeClaimSpec {
	spec := *v.Spec.DeepCopy()
	spec.VolumeName = ""
	if ds := spec.DataSource; ds != nil && (ds.Kind == "PersistentVolumeClaim" || ds.Kind == "VolumeSnapshot") {
		ds.Name = tr.HostName(ds.Name, v.Namespace)
	}
	if ds := spec.DataSourceRef; ds != nil && (ds.Kind == "PersistentVolumeClaim" || ds.Kind == "VolumeSnapshot") && ds.Namespace == nil {
		ds.Name = tr.HostName(ds.Name, v.Namespace)
	}
	return spec
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.PersistentVolumeClaim]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &corev1.PersistentVolumeClaim{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(c.Virtual, r.Translator)})
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.PersistentVolumeClaim]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Spec.Resources.Requests = p.Virtual.Spec.Resources.Requests
	if err := p.PatchHost(ctx, s, h); err != nil {
		return ctrl.Result{}, err
	}
	if v.Spec.VolumeName == "" && p.Host.Spec.VolumeName != "" {
		v.Spec.VolumeName = p.Host.Spec.VolumeName
	}
	if err := s.PatchVirtual(ctx, p.Virtual, v); err != nil {
		return ctrl.Result{}, err
	}
	vs := syncer.DeepCopy(p.Virtual)
	vs.Status = *p.Host.Status.DeepCopy()
	return ctrl.Result{}, s.PatchVirtualStatus(ctx, p.Virtual, vs)
}
