package translate

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualRef names the virtual object a host object was made from.
type VirtualRef struct {
	// Kind is the object's kind as schema.GroupVersionKind.String() prints it,
	// e.g. "/v1, Kind=Pod" or "networking.k8s.io/v1, Kind=Ingress".
	Kind string
	// Name and Namespace of the virtual object; Namespace is "" when cluster-scoped.
	Name, Namespace string
	// UID of the virtual object.
	UID types.UID
}

// BookkeepingAnnotations returns the annotations that tie a host object named
// hostName in the host namespace to ref, as vCluster writes them
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync, the Ingress example).
func (t Translator) BookkeepingAnnotations(ref VirtualRef, hostName string) map[string]string {
	return map[string]string{
		AnnotationObjectName:          ref.Name,
		AnnotationObjectNamespace:     ref.Namespace,
		AnnotationObjectUID:           string(ref.UID),
		AnnotationObjectKind:          ref.Kind,
		AnnotationObjectHostName:      hostName,
		AnnotationObjectHostNamespace: t.HostNamespace,
	}
}

// ManagedKeysValue renders keys as the value of a managed-keys annotation:
// sorted and newline-joined. An empty set renders as "".
func ManagedKeysValue(keys map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(keys)), "\n")
}

// ParseManagedKeys is the inverse of ManagedKeysValue.
func ParseManagedKeys(value string) map[string]bool {
	out := map[string]bool{}
	for k := range strings.SplitSeq(value, "\n") {
		if k != "" {
			out[k] = true
		}
	}
	return out
}

// HostNameFunc computes the expected host name of a virtual object; resource
// syncers with special names (the default/kubernetes Service) supply their own.
type HostNameFunc func(name, namespace string) string

// IsManaged reports whether host object obj belongs to this virtual cluster
// as an object of kind, so that the syncer may change or delete it. Following
// vCluster's IsManaged (https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/single_namespace.go)
// it must: live in the host
// namespace (namespaced objects), carry label managed-by=<vcluster> and the
// object-name annotation, have the name hostName(object-name,
// object-namespace), and match object-kind, object-host-name and
// object-host-namespace (the translator's host namespace, also for
// cluster-scoped objects) where those are set. hostName nil means
// Translator.HostName. Every other object is never touched.
func (t Translator) IsManaged(obj metav1.Object, kind string, hostName HostNameFunc) bool {
	if obj.GetNamespace() != "" && obj.GetNamespace() != t.HostNamespace {
		return false
	}
	if obj.GetLabels()[LabelManagedBy] != t.VCluster {
		return false
	}
	ann := obj.GetAnnotations()
	name, ok := ann[AnnotationObjectName]
	if !ok || name == "" {
		return false
	}
	if hostName == nil {
		hostName = t.HostName
	}
	if obj.GetName() != hostName(name, ann[AnnotationObjectNamespace]) {
		return false
	}
	if k, ok := ann[AnnotationObjectKind]; ok && k != kind {
		return false
	}
	if n, ok := ann[AnnotationObjectHostName]; ok && n != obj.GetName() {
		return false
	}
	// Also for cluster-scoped objects, whose names hold the host namespace
	// in a way that is not unique (vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER).
	if ns, ok := ann[AnnotationObjectHostNamespace]; ok && ns != t.HostNamespace {
		return false
	}
	return true
}

// VirtualRefOf reads the virtual object a managed host object points to.
// Call it only on objects IsManaged accepted.
func VirtualRefOf(obj metav1.Object) VirtualRef {
	ann := obj.GetAnnotations()
	return VirtualRef{
		Kind:      ann[AnnotationObjectKind],
		Name:      ann[AnnotationObjectName],
		Namespace: ann[AnnotationObjectNamespace],
		UID:       types.UID(ann[AnnotationObjectUID]),
	}
}
