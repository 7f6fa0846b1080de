package translate

import (
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Meta is the labels and annotations of a synced pair as they stood after
// the last sync, in the virtual key space; it is the base of Merge3.
type Meta struct {
	Labels      Pair
	Annotations Pair
}

// MetaResult is the outcome of a metadata sync: what each side's labels and
// annotations should be, and the Meta to remember as the next base.
type MetaResult struct {
	VirtualLabels, VirtualAnnotations map[string]string
	HostLabels, HostAnnotations       map[string]string
	Seen                              Meta
}

// isSystemAnnotation reports whether a host annotation belongs to the syncer.
func isSystemAnnotation(key string) bool {
	for _, p := range systemPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// userAnnotations are a virtual object's annotations less the bookkeeping
// keys a tenant could use to forge ownership.
func userAnnotations(virtual map[string]string) map[string]string {
	out := make(map[string]string, len(virtual))
	for k, v := range virtual {
		if !IsBookkeepingAnnotation(k) && k != AnnotationManagedLabels {
			out[k] = v
		}
	}
	return out
}

// hostUserAnnotations are the host annotations that may flow to the virtual
// object: all but the syncer's own.
func hostUserAnnotations(host map[string]string) map[string]string {
	out := make(map[string]string, len(host))
	for k, v := range host {
		if !isSystemAnnotation(k) {
			out[k] = v
		}
	}
	return out
}

// NewHostMetadata returns the labels and annotations of a host object created
// from virtual (SyncToHost), and the Meta to remember: virtual labels
// translated plus managed-by/namespace, virtual annotations plus the
// bookkeeping annotations and the managed-key lists.
func (t Translator) NewHostMetadata(virtual metav1.Object, ref VirtualRef, hostName string) (labels, annotations map[string]string, seen Meta) {
	vl := maps.Clone(virtual.GetLabels())
	va := userAnnotations(virtual.GetAnnotations())
	labels = t.HostLabels(vl, ref.Namespace)
	annotations = t.hostAnnotations(va, vl, va, ref, hostName)
	seen = Meta{Labels: Pair{Virtual: vl, Host: maps.Clone(vl)}, Annotations: Pair{Virtual: va, Host: hostUserAnnotations(va)}}
	return labels, annotations, seen
}

// SyncMetadata merges the labels and annotations of an existing pair with
// Merge3 against base (nil when unknown). Host-only labels the virtual key
// space cannot express (namespace labels of pods) and the syncer's own
// annotations are kept on the host as they are; the caller overwrites
// resource-specific system annotations afterwards.
func (t Translator) SyncMetadata(base *Meta, virtual, host metav1.Object, ref VirtualRef, hostName string) MetaResult {
	hostAnn := host.GetAnnotations()
	var lbase, abase *Pair
	if base != nil {
		lbase, abase = &base.Labels, &base.Annotations
	}
	labels := Merge3(lbase, Pair{Virtual: virtual.GetLabels(), Host: t.VirtualLabels(host.GetLabels())},
		ParseManagedKeys(hostAnn[AnnotationManagedLabels]))
	anns := Merge3(abase, Pair{Virtual: userAnnotations(virtual.GetAnnotations()), Host: hostUserAnnotations(hostAnn)},
		ParseManagedKeys(hostAnn[AnnotationManagedAnnotations]))

	hostLabels := t.HostLabels(labels.Host, ref.Namespace)
	for k, v := range host.GetLabels() {
		if _, ok := t.VirtualLabelKey(k); !ok && k != LabelManagedBy && k != LabelNamespace {
			hostLabels[k] = v // e.g. vcluster.loft.sh/ns-label-…
		}
	}
	hostAnnotations := t.hostAnnotations(anns.Host, labels.Virtual, anns.Virtual, ref, hostName)
	for k, v := range hostAnn {
		if isSystemAnnotation(k) && !IsBookkeepingAnnotation(k) && k != AnnotationManagedLabels {
			hostAnnotations[k] = v
		}
	}
	return MetaResult{
		VirtualLabels: labels.Virtual, VirtualAnnotations: mergeBack(virtual.GetAnnotations(), anns.Virtual),
		HostLabels: hostLabels, HostAnnotations: hostAnnotations,
		// The base must be in the same view as the next call's host side:
		// without the syncer's own keys, even those the virtual object set.
		Seen: Meta{Labels: labels, Annotations: Pair{Virtual: anns.Virtual, Host: hostUserAnnotations(anns.Host)}},
	}
}

// StaleBase is the Merge3 base for a host copy that was made from an
// earlier virtual object of the same name (its object-uid differs) and is
// kept rather than replaced: the host's own labels and annotations on both
// sides, so that every key the new virtual object differs in counts as a
// virtual change and wins. Without it the old object's keys would look
// like host edits and flow into the new virtual object.
func (t Translator) StaleBase(host metav1.Object) Meta {
	labels := t.VirtualLabels(host.GetLabels())
	anns := hostUserAnnotations(host.GetAnnotations())
	return Meta{Labels: Pair{Virtual: labels, Host: maps.Clone(labels)}, Annotations: Pair{Virtual: anns, Host: maps.Clone(anns)}}
}

// hostAnnotations assembles a host object's annotations: the user keys, the
// bookkeeping keys and the lists of keys copied from the virtual object.
func (t Translator) hostAnnotations(user, virtualLabels, virtualAnns map[string]string, ref VirtualRef, hostName string) map[string]string {
	out := maps.Clone(user)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, t.BookkeepingAnnotations(ref, hostName))
	setOrDelete(out, AnnotationManagedAnnotations, ManagedKeysValue(virtualAnns), len(virtualAnns) > 0)
	setOrDelete(out, AnnotationManagedLabels, ManagedKeysValue(virtualLabels), len(virtualLabels) > 0)
	return out
}

// mergeBack keeps the bookkeeping-looking keys a tenant set on the virtual
// object (they are not synced, but they are the tenant's) next to the merged
// user annotations.
func mergeBack(virtual, merged map[string]string) map[string]string {
	out := maps.Clone(merged)
	for k, v := range virtual {
		if IsBookkeepingAnnotation(k) || k == AnnotationManagedLabels {
			out[k] = v
		}
	}
	return out
}
