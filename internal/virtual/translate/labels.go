package translate

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostLabelKey is the host key for the virtual label key. Reserved keys
// (release, vcluster.loft.sh/namespace, vcluster.loft.sh/managed-by,
// vcluster.loft.sh/controlled-by) become
// vcluster.loft.sh/label-<vcluster>-x-<sha256(key)[0:10]> so a tenant cannot
// forge ownership. A key in the syncer's own host key space
// (vcluster.loft.sh/label-…, vcluster.loft.sh/ns-label-…) gets
// escapedKeyPrefix in front, so a tenant can neither forge a rewritten key
// nor a namespace label that host network policies select by (see
// escapedKey); every other key is kept verbatim.
func (t Translator) HostLabelKey(key string) string {
	for _, r := range reservedLabels {
		if r == key {
			return t.rewrittenKey(key)
		}
	}
	if escapedKey(key) {
		if prefix, _, _ := strings.Cut(key, "/"); len(prefix)+len(escapedKeyPrefix) > maxLabelPrefixLength {
			// Escaping would make the prefix too long for a label key:
			// store it hashed, like a reserved key (not read back).
			return t.rewrittenKey(key)
		}
		return escapedKeyPrefix + key
	}
	return key
}

// rewrittenKey is the hashed host form of virtual key:
// vcluster.loft.sh/label-<vcluster>-x-<sha256(key)[0:10]>.
func (t Translator) rewrittenKey(key string) string {
	return SafeConcatName(LabelPrefixRewritten+t.VCluster, "x", hash10(key))
}

// escapedKeyPrefix is put in front of a virtual label key that HostLabelKey
// must move out of the syncer's own host keys: tenant.vcluster.loft.sh/ns-label-a
// on the host is the tenant's vcluster.loft.sh/ns-label-a.
const escapedKeyPrefix = "tenant."

// maxLabelPrefixLength is the longest prefix (DNS subdomain) of a label key.
const maxLabelPrefixLength = 253

// escapedKey tells whether virtual key gets escapedKeyPrefix on the host:
// it starts with LabelPrefixRewritten or LabelPrefixNamespace, which only
// the syncer writes, or it already looks escaped (its prefix is
// vcluster.loft.sh after one or more escapedKeyPrefix), so that the escape
// stays one-to-one.
func escapedKey(key string) bool {
	if strings.HasPrefix(key, LabelPrefixRewritten) || strings.HasPrefix(key, LabelPrefixNamespace) {
		return true
	}
	rest, ok := strings.CutPrefix(key, escapedKeyPrefix)
	for ok {
		if strings.HasPrefix(rest, "vcluster.loft.sh/") {
			return true
		}
		rest, ok = strings.CutPrefix(rest, escapedKeyPrefix)
	}
	return false
}

// VirtualLabelKey is the inverse of HostLabelKey. ok is false for keys that
// exist only on the host side: the syncer's own labels and namespace labels.
func (t Translator) VirtualLabelKey(hostKey string) (key string, ok bool) {
	switch {
	case hostKey == LabelManagedBy || hostKey == LabelNamespace:
		return "", false
	case strings.HasPrefix(hostKey, LabelPrefixNamespace):
		return "", false
	case strings.HasPrefix(hostKey, LabelPrefixRewritten):
		for _, r := range reservedLabels {
			if t.HostLabelKey(r) == hostKey {
				return r, true
			}
		}
		return "", false
	}
	if key, ok := strings.CutPrefix(hostKey, escapedKeyPrefix); ok && escapedKey(key) {
		return key, true
	}
	return hostKey, true
}

// NamespaceLabelKey is the host pod label that carries label key of the pod's
// virtual namespace: vcluster.loft.sh/ns-label-<vcluster>-x-<sha256(key)[0:10]>.
func (t Translator) NamespaceLabelKey(key string) string {
	return SafeConcatName(LabelPrefixNamespace+t.VCluster, "x", hash10(key))
}

// HostLabels translates virtual labels to host labels and adds the syncer's
// own: managed-by=<vcluster> and namespace=<virtualNamespace> (omitted for
// cluster-scoped objects, where virtualNamespace is "").
func (t Translator) HostLabels(virtual map[string]string, virtualNamespace string) map[string]string {
	out := make(map[string]string, len(virtual)+2)
	for k, v := range virtual {
		out[t.HostLabelKey(k)] = v
	}
	out[LabelManagedBy] = t.VCluster
	if virtualNamespace != "" {
		out[LabelNamespace] = virtualNamespace
	}
	return out
}

// VirtualLabels is the inverse of HostLabels: host labels in the virtual key
// space, without the syncer's own labels.
func (t Translator) VirtualLabels(host map[string]string) map[string]string {
	out := make(map[string]string, len(host))
	for k, v := range host {
		if vk, ok := t.VirtualLabelKey(k); ok {
			out[vk] = v
		}
	}
	return out
}

// HostSelector translates a virtual label selector (a Service's or a
// NetworkPolicy's) so it matches only this virtual cluster's pods in
// virtualNamespace on the host. A nil or empty selector stays empty: an
// empty selector means "no selector" on Services.
func (t Translator) HostSelector(virtual map[string]string, virtualNamespace string) map[string]string {
	if len(virtual) == 0 {
		return nil
	}
	return t.HostLabels(virtual, virtualNamespace)
}

// HostLabelSelector translates a virtual metav1.LabelSelector (a
// PodDisruptionBudget's, a NetworkPolicy's podSelector) so that it matches
// only this virtual cluster's pods of virtualNamespace on the host: the keys
// of matchLabels and matchExpressions as HostLabelKey maps them, plus
// managed-by and namespace labels. An empty selector (every pod of the
// namespace) matches every pod of the virtual namespace; nil stays nil
// (no pod).
func (t Translator) HostLabelSelector(virtual *metav1.LabelSelector, virtualNamespace string) *metav1.LabelSelector {
	if virtual == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: t.HostLabels(virtual.MatchLabels, virtualNamespace)}
	for _, e := range virtual.MatchExpressions {
		e := *e.DeepCopy()
		e.Key = t.HostLabelKey(e.Key)
		out.MatchExpressions = append(out.MatchExpressions, e)
	}
	return out
}

// LabelsAnnotation renders labels as vCluster's pod annotation
// vcluster.loft.sh/labels does: one k="v" line per label, sorted by key, so
// a downward-API volume of metadata.labels reads the virtual labels.
func LabelsAnnotation(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + strconv.Quote(labels[k])
	}
	return strings.Join(lines, "\n")
}
