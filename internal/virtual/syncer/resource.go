package syncer

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Resource is one namespaced kind synced from the virtual cluster to the host.
type Resource[T client.Object] interface {
	// Name is the controller name, the plural resource, e.g. "pods".
	Name() string
	// GVK is the kind, written to vcluster.loft.sh/object-kind.
	GVK() schema.GroupVersionKind
	// New returns an empty object of the kind.
	New() T
	// HostName is the host name of the virtual object name/namespace.
	HostName(name, namespace string) string
	// SyncToHost creates the host object for c.Virtual (no host object
	// exists), with c.CreateHost.
	SyncToHost(ctx context.Context, s *Context, c *Create[T]) (ctrl.Result, error)
	// Sync brings an existing pair together.
	Sync(ctx context.Context, s *Context, p *Pair[T]) (ctrl.Result, error)
	// SyncToVirtual handles a managed host object whose virtual object does
	// not exist (or is no longer selected). For kinds synced to the host the
	// virtual object was deleted, so the host copy goes: Kind provides that.
	SyncToVirtual(ctx context.Context, s *Context, host T) (ctrl.Result, error)
}

// Create is the input of SyncToHost.
type Create[T client.Object] struct {
	// Virtual is the virtual object (from the cache: do not modify).
	Virtual T
	// Ref names the virtual object; HostName is the host name to create.
	Ref      translate.VirtualRef
	HostName string
	// Labels and Annotations are the host object's metadata as the engine
	// computed it (translated labels, bookkeeping annotations).
	Labels, Annotations map[string]string
	// WasSynced is true when this syncer created or saw the host object
	// before: it has been deleted on the host since (a host pod evicted,
	// say). A SyncToHost that returned without creating (a pod refused by
	// policy, waiting for its service account) does not count.
	WasSynced bool

	// patches are the kind's patches, which CreateHost applies.
	patches *patches.Set
	// created is set by CreateHost when it made the host object.
	created bool
}

// Pair is the input of Sync. Write the host object with Pair.PatchHost.
type Pair[T client.Object] struct {
	// Virtual and Host are the two objects (from the caches: do not
	// modify). When the kind has patches, Host is the host object with
	// them undone (patches.Set.ToVirtual), so it compares with and copies
	// back to the virtual object field by field; a HostViewer's Host is
	// its VirtualView.
	Virtual, Host T
	Ref           translate.VirtualRef
	// Meta is the merged metadata both sides should carry.
	Meta translate.MetaResult

	// patches are the kind's patches; patched is the host object as the
	// host has it, with them applied.
	patches *patches.Set
	patched T
	// keepBase is set by KeepBase.
	keepBase bool
}

// KeepBase tells the engine that this Sync wrote neither side's labels and
// annotations (it recreated the virtual object, or left the host object as
// it was): the merge base of the last Sync that did stays, instead of
// Meta.Seen, which describes writes that did not happen.
func (p *Pair[T]) KeepBase() { p.keepBase = true }

// Finalizer is implemented by kinds whose virtual objects wait for the
// syncer to finish their deletion (pods: the syncer plays the kubelet).
// Finalize is called for a terminating virtual object; the host object may
// or may not exist (host is the zero value when not).
type Finalizer[T client.Object] interface {
	Finalize(ctx context.Context, s *Context, virtual, host T, hostExists bool) (ctrl.Result, error)
}

// UIDPolicy is implemented by kinds whose host object must survive a UID
// mismatch (a recreated virtual Service, a PVC whose data must not go): the
// engine then only rewrites the bookkeeping through Sync.
type UIDPolicy interface {
	KeepOnUIDMismatch() bool
}

// Watcher is implemented by kinds that need more watches than their own kind
// on both sides; host is the host cluster, whose cache the extra watches
// of host objects use.
type Watcher interface {
	Watch(b *builder.Builder, s *Context, host cluster.Cluster) *builder.Builder
}

// Selector is implemented by kinds that sync only some virtual objects
// (selective Secret and ConfigMap sync). A virtual object it rejects is not
// created on the host, and its host copy is deleted.
type Selector[T client.Object] interface {
	ShouldSync(ctx context.Context, s *Context, virtual T) bool
}

// HostViewer is implemented by kinds whose host objects carry values the
// syncer sets there itself and that are not host edits: an EndpointSlice's
// kubernetes.io/service-name label names the host Service, not the
// virtual one. VirtualView returns a copy of host (which it must not
// modify) with those values as virtual has them. The engine merges the
// labels and annotations of the pair against that view and passes it as
// Pair.Host, so such values never flow back to the virtual object;
// Pair.PatchHost still computes its patch against the host object as the
// host has it.
type HostViewer[T client.Object] interface {
	VirtualView(host, virtual T) T
}
