// Package customresources syncs objects of any CustomResourceDefinition
// (vCluster's sync.toHost.customResources and sync.fromHost.customResources,
// keyed <plural>.<group>): the definition is copied from the host into the
// virtual cluster at start, and the objects go through the same engine as
// the built-in kinds, as unstructured objects — to the host with name
// translation, bookkeeping annotations and the entry's patches, status
// back; or, from the host, as read-only copies (internal/virtual/resources/fromhost).
package customresources

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// ParseName splits a customResources key, <plural>.<group> (e.g.
// "widgets.example.com"), as the CRD's name is written. It returns an error
// for a key without a group or with uppercase letters.
func ParseName(name string) (schema.GroupResource, error) {
	plural, group, ok := strings.Cut(name, ".")
	if !ok || plural == "" || group == "" {
		return schema.GroupResource{}, fmt.Errorf("%q is not <plural>.<group>, e.g. widgets.example.com", name)
	}
	if strings.ToLower(name) != name {
		return schema.GroupResource{}, fmt.Errorf("%q: a CustomResourceDefinition name is lowercase", name)
	}
	return schema.GroupResource{Group: group, Resource: plural}, nil
}

// Definition is what the syncer needs of a CRD.
type Definition struct {
	// GVK is the kind in its storage version.
	GVK schema.GroupVersionKind
	// Namespaced is false for a cluster-scoped kind.
	Namespaced bool
	// StatusSubresource is true when the storage version has the status
	// subresource (status is then written through it).
	StatusSubresource bool
}

// Describe reads the Definition of crd.
func Describe(crd *apiextensionsv1.CustomResourceDefinition) (Definition, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return Definition{
				GVK:               schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
				Namespaced:        crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
				StatusSubresource: v.Subresources != nil && v.Subresources.Status != nil,
			}, nil
		}
	}
	return Definition{}, fmt.Errorf("CustomResourceDefinition %s has no storage version", crd.Name)
}

// VirtualDefinition is the virtual cluster's copy of host CRD h: its spec
// (a conversion webhook dropped: the host's webhook Service is not
// reachable from the virtual API server, so every version is served as
// stored), its labels plus fromhost.Label, and its annotations.
func VirtualDefinition(h *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	out := &apiextensionsv1.CustomResourceDefinition{}
	out.Name = h.Name
	out.Labels = maps.Clone(h.Labels)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[fromhost.Label] = "true"
	out.Annotations = maps.Clone(h.Annotations)
	out.Spec = *h.Spec.DeepCopy()
	if c := out.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter {
		out.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	return out
}

// content are the top-level fields of an object but apiVersion, kind,
// metadata and status: the spec, or the kind's own fields.
func content(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
		default:
			out[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	return out
}

// SetContent replaces the top-level fields of dst but apiVersion, kind,
// metadata and status by those of src.
func SetContent(dst, src *unstructured.Unstructured) {
	for k := range content(dst) {
		delete(dst.Object, k)
	}
	maps.Copy(dst.Object, content(src))
}

// HostObject is the host copy of virtual object v: its content (SetContent)
// under the host metadata meta (name, namespace, labels, annotations), no
// status (the host's controllers write it).
func HostObject(v *unstructured.Unstructured, gvk schema.GroupVersionKind, name, namespace string, labels, annotations map[string]string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: content(v)}
	out.SetGroupVersionKind(gvk)
	out.SetName(name)
	out.SetNamespace(namespace)
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
	return out
}

// Enabled lists the keys of entries that are enabled, sorted. entries is
// a customResources map of the configuration (toHost or fromHost).
func Enabled[E interface{ IsEnabled() bool }](entries map[string]E) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if entries[name].IsEnabled() {
			out = append(out, name)
		}
	}
	return out
}
