// Package fromhost keeps read-only virtual copies of cluster-scoped host
// objects (vCluster's sync.fromHost ingressClasses, runtimeClasses,
// priorityClasses, storageClasses, csiNodes, csiDrivers): each host object
// of the kind appears in the virtual cluster under its own name, labelled
// Label; a change on the host is copied, a change in the virtual cluster
// is put back, and the copy goes with the host object. A virtual object of
// that name the tenant made itself (without Label) is never touched. Host
// objects that are themselves a virtual cluster's copies (IsHostOwn) are
// not copied.
package fromhost

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Label marks a virtual object that is a copy of a host object.
const Label = "clustersync.io/from-host"

// IsHostOwn reports whether host object h belongs to the host, and so is
// copied into the virtual cluster: not when it is a virtual cluster's copy
// of a tenant's object, labelled vcluster.loft.sh/managed-by (this
// cluster's or another's, clustersync's or vCluster's), such as the host
// copy vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER of a tenant's StorageClass
// under sync.toHost.storageClasses. Copying it would show the tenant its
// own class twice, or another tenant's.
func IsHostOwn(h metav1.Object) bool {
	_, copied := h.GetLabels()[translate.LabelManagedBy]
	return !copied
}

// VirtualCopy is the virtual copy of host object h: its apiVersion, kind,
// name, labels (plus Label=true) and annotations, and every top-level field
// but metadata and status (spec, or the kind's own fields: a
// PriorityClass's value, a RuntimeClass's handler).
func VirtualCopy(h *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range h.Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = runtimeDeepCopy(v)
		}
	}
	out.SetName(h.GetName())
	labels := maps.Clone(h.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[Label] = "true"
	out.SetLabels(labels)
	if a := h.GetAnnotations(); len(a) > 0 {
		out.SetAnnotations(maps.Clone(a))
	}
	return out
}

// Differs reports whether virtual object cur is not want (a VirtualCopy):
// another label, annotation or top-level field but metadata and status.
func Differs(want, cur *unstructured.Unstructured) bool {
	if !equality.Semantic.DeepEqual(want.GetLabels(), cur.GetLabels()) ||
		!equality.Semantic.DeepEqual(emptyNil(want.GetAnnotations()), emptyNil(cur.GetAnnotations())) {
		return true
	}
	fields := func(u *unstructured.Unstructured) map[string]any {
		out := map[string]any{}
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return !equality.Semantic.DeepEqual(fields(want), fields(cur))
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// runtimeDeepCopy copies a generic JSON value.
func runtimeDeepCopy(v any) any {
	return (&unstructured.Unstructured{Object: map[string]any{"v": v}}).DeepCopy().Object["v"]
}
