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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/resources/persistentvolumes"
	"github.com/clustersync/clustersync/internal/virtual/resources/storageclasses"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the PersistentVolumeClaim resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.PersistentVolumeClaim]
	syncClasses, syncVolumes bool
}

// New returns the PersistentVolumeClaim syncer. syncClasses and
// syncVolumes are sync.toHost.storageClasses.enabled and
// sync.toHost.persistentVolumes.enabled: a claim then names the host copies
// of the tenant's classes and volumes.
func New(tr translate.Translator, syncClasses, syncVolumes bool) *Syncer {
	return &Syncer{syncClasses: syncClasses, syncVolumes: syncVolumes,
		Kind: syncer.Kind[*corev1.PersistentVolumeClaim]{Plural: "persistentvolumeclaims", Kind: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
			NewObject: func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }, Translator: tr}}
}

// names resolves, from the virtual cluster's cache, the host names of the
// class and volume a claim names.
func (r *Syncer) names(ctx context.Context, s *syncer.Context) Names {
	return Names{Translator: r.Translator,
		StorageClass: func(name string) string { return storageclasses.HostClassOf(ctx, s, r.syncClasses, name) },
		Volume: func(name string) string {
			var pv corev1.PersistentVolume
			if !r.syncVolumes || s.Virtual.Get(ctx, client.ObjectKey{Name: name}, &pv) != nil || persistentvolumes.IsFake(&pv) {
				return ""
			}
			return r.Translator.HostClusterScopedName(name)
		},
	}
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }

// KeepOnUIDMismatch implements syncer.UIDPolicy.
func (r *Syncer) KeepOnUIDMismatch() bool { return true }

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.PersistentVolumeClaim]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &corev1.PersistentVolumeClaim{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(c.Virtual, r.names(ctx, s))})
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.PersistentVolumeClaim]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Spec.Resources.Requests = p.Virtual.Spec.Resources.Requests
	if hv := p.Host.Spec.VolumeName; v.Spec.VolumeName == "" && hv != "" {
		// The host bound it: to the host copy of one of the tenant's
		// volumes (its virtual name), or to a host volume (its name; the
		// stand-in controller makes a virtual volume of that name).
		v.Spec.VolumeName = hv
		if ref, ok := s.Mappings.VirtualOf("PersistentVolume", hv); ok {
			v.Spec.VolumeName = ref.Name
		}
	}
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *corev1.PersistentVolumeClaim) { vs.Status = *p.Host.Status.DeepCopy() })
}
