package nodes

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// AnnotationHostNode, set to "true", marks a virtual Node that the syncer
// made as a copy of the host node of the same name
// (sync.fromHost.nodes.enabled). The syncer updates and deletes only such
// copies and fake nodes (translate.LabelFakeNode); a Node the tenant made
// itself is never touched.
const AnnotationHostNode = "clustersync.io/host-node"

// IsCopy reports whether virtual node n is a copy of a host node made by
// the syncer.
func IsCopy(n *corev1.Node) bool { return n.Annotations[AnnotationHostNode] == "true" }

// IsFake reports whether virtual node n is a fake node made by the syncer.
func IsFake(n *corev1.Node) bool { return n.Labels[translate.LabelFakeNode] == "true" }

// Managed reports whether the syncer made virtual node n (a fake node or a
// copy of a host node), and so may change or delete it.
func Managed(n *corev1.Node) bool { return IsCopy(n) || IsFake(n) }

// Selected reports whether sync.fromHost.nodes.selector picks the host node
// carrying labels: with All every node; else, when Labels is not empty,
// the nodes carrying every one of them; else none (then only the nodes
// that run the tenant's pods are synced, see Wanted). All wins over
// Labels, as in vCluster (pkg/controllers/resources/nodes/syncer.go of
// github.com/loft-sh/vcluster).
func Selected(sel config.NodeSelector, labels map[string]string) bool {
	if sel.All {
		return true
	}
	if len(sel.Labels) == 0 {
		return false
	}
	for k, v := range sel.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Wanted reports whether host node host gets a virtual copy: when the
// selector picks it, or while a virtual pod is bound to it (needed). A
// node that still runs a tenant's pod stays even when the selector no
// longer picks it (its labels changed, or the pod was placed before the
// selector was set): without its Node the virtual cluster's pod garbage
// collector would delete the pod.
func Wanted(sel config.NodeSelector, host *corev1.Node, needed bool) bool {
	return needed || Selected(sel, host.Labels)
}

// Fields are the parts of a node that syncBackChanges writes back to the
// host: its labels and taints. Labels are in the virtual key space: the
// host-only labels (isHostOnlyLabel) are left out.
type Fields struct {
	Labels map[string]string
	Taints []corev1.Taint
}

// isHostOnlyLabel reports whether a host node label is neither copied into
// the virtual cluster nor ever changed on the host by the syncer: the
// fake-node label (a host that is itself a virtual cluster has it), which
// would make the copy look like a fake node.
func isHostOnlyLabel(key string) bool { return key == translate.LabelFakeNode }

// isHostBookkeeping reports whether a host node annotation is left out of
// the virtual copy: the keys of syncers (vcluster.loft.sh/,
// clustersync.io/, e.g. another virtual cluster's) and kubectl's
// last-applied configuration.
func isHostBookkeeping(key string) bool {
	return strings.HasPrefix(key, "vcluster.loft.sh/") || strings.HasPrefix(key, "clustersync.io/") ||
		key == corev1.LastAppliedConfigAnnotation
}

// FieldsOf returns the labels (less the host-only ones) and taints of node
// n, copied.
func FieldsOf(n *corev1.Node) Fields {
	labels := make(map[string]string, len(n.Labels))
	for k, v := range n.Labels {
		if !isHostOnlyLabel(k) {
			labels[k] = v
		}
	}
	return Fields{Labels: labels, Taints: slices.Clone(n.Spec.Taints)}
}

// taintKey identifies a taint on a node: the API server allows one taint
// per key and effect.
func taintKey(t corev1.Taint) string { return t.Key + ":" + string(t.Effect) }

// taintValues maps each taint of ts to its value, by taintKey.
func taintValues(ts []corev1.Taint) map[string]string {
	out := make(map[string]string, len(ts))
	for _, t := range ts {
		out[taintKey(t)] = t.Value
	}
	return out
}

// Merge returns the labels and taints both nodes of a pair get when
// changes made in the virtual cluster are synced back (syncBackChanges),
// merging virtual and host key by key (a taint's key is its key and
// effect) against base, the pair's Fields after the last sync, with
// translate.Merge3: a key the tenant changed since base takes the virtual
// value (or absence), on both sides, even when the host changed it too;
// every other key takes the host's. Without a base (the syncer restarted)
// nothing is known to come from the tenant: the host's Fields win, so the
// host node is never written with what may not be a virtual change. The
// inputs are not modified.
func Merge(base *Fields, virtual, host Fields) Fields {
	if base == nil {
		return Fields{Labels: maps.Clone(host.Labels), Taints: slices.Clone(host.Taints)}
	}
	return mergeFields(*base, *base, virtual, host, true)
}

// TenantFields returns the labels and taints of a virtual copy that keeps
// the tenant's changes without writing them to the host (the virtual
// scheduler without syncBackChanges): merged key by key with
// translate.Merge3 against the copy's Fields after the last sync
// (baseVirtual) and the host node's then (baseHost), a key the tenant
// changed since keeps the tenant's value (or absence), a key the host
// changed since takes the host's, every other key stays as the copy has
// it. Without a base (the syncer restarted) the host's Fields win, as in
// Merge. The inputs are not modified.
func TenantFields(baseVirtual, baseHost *Fields, virtual, host Fields) Fields {
	if baseVirtual == nil || baseHost == nil {
		return Fields{Labels: maps.Clone(host.Labels), Taints: slices.Clone(host.Taints)}
	}
	return mergeFields(*baseVirtual, *baseHost, virtual, host, false)
}

// mergeFields merges virtual and host against bases bv and bh and returns
// the host side of the result (toHost) or the virtual side.
func mergeFields(bv, bh, virtual, host Fields, toHost bool) Fields {
	merge := func(b1, b2, v, h map[string]string) map[string]string {
		out := translate.Merge3(&translate.Pair{Virtual: b1, Host: b2}, translate.Pair{Virtual: v, Host: h}, nil)
		if toHost {
			return out.Host
		}
		return out.Virtual
	}
	labels := merge(bv.Labels, bh.Labels, virtual.Labels, host.Labels)
	want := merge(taintValues(bv.Taints), taintValues(bh.Taints), taintValues(virtual.Taints), taintValues(host.Taints))
	// The result keeps the host's order and taint objects (their
	// timeAdded) where they are unchanged, then adds the virtual ones.
	var taints []corev1.Taint
	seen := map[string]bool{}
	for _, list := range [][]corev1.Taint{host.Taints, virtual.Taints} {
		for _, t := range list {
			k := taintKey(t)
			if v, ok := want[k]; ok && !seen[k] && v == t.Value {
				taints = append(taints, t)
				seen[k] = true
			}
		}
	}
	return Fields{Labels: labels, Taints: taints}
}

// WithFields returns a copy of host node h carrying the labels and taints
// f (its host-only labels kept as they are), and whether that differs
// from h; only labels and taints ever change.
func WithFields(h *corev1.Node, f Fields) (*corev1.Node, bool) {
	out := h.DeepCopy()
	labels := maps.Clone(f.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range h.Labels {
		if isHostOnlyLabel(k) {
			labels[k] = v
		}
	}
	out.Labels = labels
	out.Spec.Taints = slices.Clone(f.Taints)
	changed := !equality.Semantic.DeepEqual(out.Labels, h.Labels) || !equality.Semantic.DeepEqual(out.Spec.Taints, h.Spec.Taints)
	return out, changed
}

// CopyOptions are the settings VirtualNode follows.
type CopyOptions struct {
	// ClearImageStatus empties status.images
	// (sync.fromHost.nodes.clearImageStatus).
	ClearImageStatus bool
	// Kubelet is the syncer's kubelet proxy, which the copy names as its
	// kubelet (syncer.Context.Kubelet).
	Kubelet syncer.KubeletEndpoint
	// Tenant are the addresses of networking.advanced.proxyKubelets: they
	// replace the host's Hostname (Tenant.Hostname) and InternalIP
	// (Tenant.IP) addresses, as vCluster's real nodes do.
	Tenant TenantAddresses
}

// VirtualNode is the virtual copy of host node h, carrying labels and
// taints f: h's name, its annotations less the host's bookkeeping
// (isHostBookkeeping) plus AnnotationHostNode, its spec and its status.
// Two things differ from the host so that `kubectl logs`, `exec`, `attach`
// and `port-forward` reach the syncer's kubelet proxy: the first address is
// of type InternalDNS and is the proxy's IP (the virtual API server prefers
// InternalDNS, KubeletAddressTypes; none when o.Kubelet is zero), in place
// of the host's InternalDNS names, and the kubelet port is the proxy's. The
// other addresses (InternalIP, ExternalIP, Hostname) are the host's, so a
// tenant reaches the node's host ports and node ports at the node's real
// address, as the HostPort and NodePort conformance specs do — unless
// o.Tenant (proxyKubelets) replaces the InternalIP and Hostname. With
// o.ClearImageStatus, status.images is empty. h is not modified.
func VirtualNode(h *corev1.Node, f Fields, o CopyOptions) *corev1.Node {
	annotations := map[string]string{}
	for k, v := range h.Annotations {
		if !isHostBookkeeping(k) {
			annotations[k] = v
		}
	}
	annotations[AnnotationHostNode] = "true"
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Labels: maps.Clone(f.Labels), Annotations: annotations},
		Spec:       *h.Spec.DeepCopy(),
		Status:     *h.Status.DeepCopy(),
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Spec.Taints = slices.Clone(f.Taints)
	if o.ClearImageStatus {
		n.Status.Images = nil
	}
	var addrs []corev1.NodeAddress
	if o.Kubelet.IP != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: o.Kubelet.IP})
	}
	if o.Tenant.IP != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: o.Tenant.IP})
	}
	for _, a := range h.Status.Addresses {
		switch {
		case a.Type == corev1.NodeInternalDNS && o.Kubelet.IP != "",
			a.Type == corev1.NodeInternalIP && o.Tenant.IP != "",
			a.Type == corev1.NodeHostName && o.Tenant.Hostname != "":
		default:
			addrs = append(addrs, a)
		}
	}
	if o.Tenant.Hostname != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: o.Tenant.Hostname})
	}
	n.Status.Addresses = addrs
	n.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: o.Kubelet.Port}}
	return n
}

// Updated returns virtual node cur changed to want (a VirtualNode or a
// FakeNode): its labels, annotations and spec, then its status, each with
// whether it changed, so that the caller writes only what changed (the
// status through its subresource). The spec's immutable fields (podCIDR,
// podCIDRs, providerID once set) keep cur's values. cur is not modified.
func Updated(cur, want *corev1.Node) (out *corev1.Node, metaChanged, statusChanged bool) {
	out = cur.DeepCopy()
	out.Labels, out.Annotations = maps.Clone(want.Labels), maps.Clone(want.Annotations)
	spec := *want.Spec.DeepCopy()
	if cur.Spec.PodCIDR != "" {
		spec.PodCIDR, spec.PodCIDRs = cur.Spec.PodCIDR, slices.Clone(cur.Spec.PodCIDRs)
	}
	if cur.Spec.ProviderID != "" {
		spec.ProviderID = cur.Spec.ProviderID
	}
	out.Spec = spec
	metaChanged = !equality.Semantic.DeepEqual(out.Labels, cur.Labels) || !equality.Semantic.DeepEqual(out.Annotations, cur.Annotations) ||
		!equality.Semantic.DeepEqual(out.Spec, cur.Spec)
	out.Status = *want.Status.DeepCopy()
	statusChanged = !equality.Semantic.DeepEqual(out.Status, cur.Status)
	return out, metaChanged, statusChanged
}

// KubeletAddressTypes is the virtual API server's
// --kubelet-preferred-address-types: the InternalDNS address a real node's
// virtual copy carries for the syncer's kubelet proxy (VirtualNode), then
// the InternalIP of a fake node (the proxy's too).
func KubeletAddressTypes() []corev1.NodeAddressType {
	return []corev1.NodeAddressType{corev1.NodeInternalDNS, corev1.NodeInternalIP}
}
