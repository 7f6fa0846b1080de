package syncer

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Kind is the part of a Resource every kind has alike — its name, kind,
// constructor and the standard name translation. Embed it in a resource
// syncer; a kind with special host names overrides HostName.
type Kind[T client.Object] struct {
	// Plural is the controller name, e.g. "secrets".
	Plural string
	// Kind is the object kind, e.g. corev1.SchemeGroupVersion.WithKind("Secret").
	Kind schema.GroupVersionKind
	// NewObject returns an empty object of the kind.
	NewObject func() T
	// Translator maps names to the host.
	Translator translate.Translator
	// ClusterScoped is set for a cluster-scoped kind (PriorityClass,
	// StorageClass, PersistentVolume): its host copy is cluster-scoped too,
	// named vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER.
	ClusterScoped bool
}

// IsClusterScoped implements the engine's scope check.
func (k Kind[T]) IsClusterScoped() bool { return k.ClusterScoped }

// Name implements Resource.
func (k Kind[T]) Name() string { return k.Plural }

// GVK implements Resource.
func (k Kind[T]) GVK() schema.GroupVersionKind { return k.Kind }

// New implements Resource.
func (k Kind[T]) New() T { return k.NewObject() }

// HostName implements Resource: vCluster's NAME-x-NAMESPACE-x-VCLUSTER, or
// for a cluster-scoped kind vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER
// (translate.Translator.HostClusterScopedName).
func (k Kind[T]) HostName(name, namespace string) string {
	if k.ClusterScoped {
		return k.Translator.HostClusterScopedName(name)
	}
	return k.Translator.HostName(name, namespace)
}

// SyncToVirtual implements Resource for kinds synced to the host: the
// virtual object is gone, so its host copy is deleted, unless the host copy
// carries vcluster.loft.sh/skip-backsync=true (vCluster's opt-out). The
// annotation is checked again on the host copy as the host API server has
// it: the cache may not have seen an annotation set just before the
// virtual object was deleted, and a deletion cannot be undone.
func (k Kind[T]) SyncToVirtual(ctx context.Context, s *Context, host T) (ctrl.Result, error) {
	if host.GetAnnotations()[translate.AnnotationSkipBacksync] == "true" {
		return ctrl.Result{}, nil
	}
	live := k.NewObject()
	if err := s.HostReader.Get(ctx, client.ObjectKeyFromObject(host), live); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if live.GetUID() != host.GetUID() || live.GetAnnotations()[translate.AnnotationSkipBacksync] == "true" {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, s.DeleteHost(ctx, live)
}
