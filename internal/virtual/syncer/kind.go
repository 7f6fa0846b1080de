package syncer

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
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
}

// Name implements Resource.
func (k Kind[T]) Name() string { return k.Plural }

// GVK implements Resource.
func (k Kind[T]) GVK() schema.GroupVersionKind { return k.Kind }

// New implements Resource.
func (k Kind[T]) New() T { return k.NewObject() }

// HostName implements Resource: vCluster's NAME-x-NAMESPACE-x-VCLUSTER.
func (k Kind[T]) HostName(name, namespace string) string {
	return k.Translator.HostName(name, namespace)
}
