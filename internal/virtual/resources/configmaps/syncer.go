// Package configmaps syncs virtual ConfigMaps to the host, selectively as
// vCluster does: only those a synced pod references (including each
// namespace's kube-root-ca.crt, which becomes kube-root-ca.crt-x-NS-x-VC so
// it never meets the host's own), those annotated
// vcluster.loft.sh/force-sync=true, or all with sync.toHost.configMaps.all
// (shared/reference/002_c3c516dc3011c607.txt). Data flows virtual → host.
package configmaps

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the ConfigMap resource syncer.
type Syncer struct {
	tr  translate.Translator
	cfg config.SelectiveSync
}

// New returns the ConfigMap syncer for a virtual cluster.
func New(tr translate.Translator, cfg config.SelectiveSync) *Syncer { return &Syncer{tr: tr, cfg: cfg} }

// Name implements syncer.Resource.
func (r *Syncer) Name() string { return "configmaps" }

// GVK implements syncer.Resource.
func (r *Syncer) GVK() schema.GroupVersionKind {
	return corev1.SchemeGroupVersion.WithKind("ConfigMap")
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.ConfigMap { return &corev1.ConfigMap{} }

// HostName implements syncer.Resource.
func (r *Syncer) HostName(name, namespace string) string { return r.tr.HostName(name, namespace) }

// ShouldSync implements syncer.Selector.
func (r *Syncer) ShouldSync(_ context.Context, s *syncer.Context, v *corev1.ConfigMap) bool {
	return s.SelectedForSync(r.cfg, "ConfigMap", v)
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.ConfigMap]) (ctrl.Result, error) {
	v := c.Virtual
	host := &corev1.ConfigMap{ObjectMeta: syncer.HostMeta(s, c), Data: v.Data, BinaryData: v.BinaryData, Immutable: v.Immutable}
	return s.CreateHost(ctx, host)
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.ConfigMap]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	if p.Host.Immutable == nil || !*p.Host.Immutable {
		h.Data, h.BinaryData, h.Immutable = p.Virtual.Data, p.Virtual.BinaryData, p.Virtual.Immutable
	}
	if err := s.PatchHost(ctx, p.Host, h); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, s.PatchVirtual(ctx, p.Virtual, v)
}
