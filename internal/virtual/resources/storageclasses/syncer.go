package storageclasses

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the StorageClass resource syncer.
type Syncer struct {
	syncer.Kind[*storagev1.StorageClass]
}

// New returns the StorageClass syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*storagev1.StorageClass]{Plural: "storageclasses",
		Kind:      storagev1.SchemeGroupVersion.WithKind("StorageClass"),
		NewObject: func() *storagev1.StorageClass { return &storagev1.StorageClass{} }, Translator: tr, ClusterScoped: true}}
}

// ShouldSync implements syncer.Selector: copies of host classes stay in
// the virtual cluster.
func (r *Syncer) ShouldSync(_ context.Context, _ *syncer.Context, v *storagev1.StorageClass) bool {
	return Synced(v)
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*storagev1.StorageClass]) (ctrl.Result, error) {
	h := &storagev1.StorageClass{ObjectMeta: syncer.HostMeta(s, c)}
	Apply(h, c.Virtual)
	return c.CreateHost(ctx, s, h)
}

// Sync implements syncer.Resource. A change of an immutable field replaces
// the host copy (claims already provisioned keep their volumes).
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*storagev1.StorageClass]) (ctrl.Result, error) {
	if Immutable(p.Host, p.Virtual) {
		if err := s.DeleteHost(ctx, p.Host); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: syncer.ConflictRetry}, nil
	}
	v, h := syncer.ApplyMeta(p)
	Apply(h, p.Virtual)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}

// HostClassOf is the host class for virtual class name (HostName), read
// from the virtual cluster's cache; a class the virtual cluster does not
// have keeps its name (a host class of that name, if any). syncOn is
// sync.toHost.storageClasses.enabled.
func HostClassOf(ctx context.Context, s *syncer.Context, syncOn bool, name string) string {
	var sc storagev1.StorageClass
	if err := s.Virtual.Get(ctx, client.ObjectKey{Name: name}, &sc); err != nil {
		return name
	}
	return HostName(&sc, syncOn, s.Translator.HostClusterScopedName(name))
}
