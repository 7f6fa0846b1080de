// Package configmaps syncs virtual ConfigMaps to the host, selectively as
// vCluster does: only those a synced pod references (including each
// namespace's kube-root-ca.crt, which becomes kube-root-ca.crt-x-NS-x-VC so
// it never meets the host's own), those annotated
// vcluster.loft.sh/force-sync=true, or all with sync.toHost.configMaps.all
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync). Data flows virtual → host.
package configmaps

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the ConfigMap resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.ConfigMap]
	cfg config.SelectiveSync
}

// New returns the ConfigMap syncer for a virtual cluster.
func New(tr translate.Translator, cfg config.SelectiveSync) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.ConfigMap]{Plural: "configmaps", Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		NewObject: func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, Translator: tr}, cfg: cfg}
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.ConfigMap { return &corev1.ConfigMap{} }

// ShouldSync implements syncer.Selector.
func (r *Syncer) ShouldSync(_ context.Context, s *syncer.Context, v *corev1.ConfigMap) bool {
	return s.SelectedForSync(r.cfg, "ConfigMap", v)
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.ConfigMap]) (ctrl.Result, error) {
	v := c.Virtual
	host := &corev1.ConfigMap{ObjectMeta: syncer.HostMeta(s, c), Data: v.Data, BinaryData: v.BinaryData, Immutable: v.Immutable}
	return c.CreateHost(ctx, s, host)
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.ConfigMap]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	if p.Host.Immutable == nil || !*p.Host.Immutable {
		h.Data, h.BinaryData, h.Immutable = p.Virtual.Data, p.Virtual.BinaryData, p.Virtual.Immutable
	}
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
