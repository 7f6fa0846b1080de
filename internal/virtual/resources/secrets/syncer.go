// Package secrets syncs virtual Secrets to the host, selectively as vCluster
// does: only those a synced pod references, those annotated
// vcluster.loft.sh/force-sync=true, or all of them with
// sync.toHost.secrets.all (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync).
// Data flows from the virtual Secret to its host copy.
package secrets

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the Secret resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.Secret]
	cfg config.SelectiveSync
}

// New returns the Secret syncer for a virtual cluster.
func New(tr translate.Translator, cfg config.SelectiveSync) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.Secret]{Plural: "secrets", Kind: corev1.SchemeGroupVersion.WithKind("Secret"),
		NewObject: func() *corev1.Secret { return &corev1.Secret{} }, Translator: tr}, cfg: cfg}
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.Secret { return &corev1.Secret{} }

// ShouldSync implements syncer.Selector.
func (r *Syncer) ShouldSync(_ context.Context, s *syncer.Context, v *corev1.Secret) bool {
	return s.SelectedForSync(r.cfg, "Secret", v)
}

// HostType is the host type of a virtual Secret type. Service-account token
// Secrets become Opaque: the host's token controller would otherwise act on
// (and delete) a token Secret for a service account it does not have.
func HostType(t corev1.SecretType) corev1.SecretType {
	if t == corev1.SecretTypeServiceAccountToken {
		return corev1.SecretTypeOpaque
	}
	return t
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.Secret]) (ctrl.Result, error) {
	v := c.Virtual
	host := &corev1.Secret{ObjectMeta: syncer.HostMeta(s, c), Type: HostType(v.Type), Data: v.Data, Immutable: v.Immutable}
	return c.CreateHost(ctx, s, host)
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.Secret]) (ctrl.Result, error) {
	if p.Host.Type != HostType(p.Virtual.Type) {
		// The type is immutable: replace the host copy.
		return ctrl.Result{RequeueAfter: time.Second}, s.DeleteHost(ctx, p.Host)
	}
	v, h := syncer.ApplyMeta(p)
	if !equality.Semantic.DeepEqual(h.Data, p.Virtual.Data) && (p.Host.Immutable == nil || !*p.Host.Immutable) {
		h.Data = p.Virtual.Data
		h.StringData = nil
	}
	h.Immutable = p.Virtual.Immutable
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
