package fromhost

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// IntoNamespace is the Mapping that copies the objects of every host
// namespace into one virtual namespace, named NAME-x-HOSTNAMESPACE
// (translate.SafeConcatName) so that objects of the same name in two host
// namespaces do not collide. It remembers the host key of each copy it
// named (from the host objects' events, which come first, also after a
// restart); a virtual object it has not named has no host object, so a
// stale copy is deleted. Use one per controller (NewIntoNamespace).
type IntoNamespace struct {
	target string
	hostOf sync.Map // types.NamespacedName (virtual) → types.NamespacedName (host)
}

// NewIntoNamespace returns the mapping into virtual namespace target.
func NewIntoNamespace(target string) *IntoNamespace { return &IntoNamespace{target: target} }

// Virtual implements Mapping.
func (m *IntoNamespace) Virtual(h types.NamespacedName) (types.NamespacedName, bool) {
	v := types.NamespacedName{Namespace: m.target, Name: translate.SafeConcatName(h.Name, "x", h.Namespace)}
	m.hostOf.Store(v, h)
	return v, true
}

// Host implements Mapping.
func (m *IntoNamespace) Host(v types.NamespacedName) (types.NamespacedName, bool) {
	h, ok := m.hostOf.Load(v)
	if !ok {
		return types.NamespacedName{}, false
	}
	return h.(types.NamespacedName), true
}
