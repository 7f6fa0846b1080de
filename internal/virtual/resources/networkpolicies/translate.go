// Package networkpolicies syncs virtual NetworkPolicies to the host
// (sync.toHost.networkPolicies, off by default as in vCluster). Every
// pod of a virtual cluster lives in one host namespace, so the host copy
// says with pod labels what the virtual policy says with namespaces:
//   - spec.podSelector and a peer's podSelector alone (the policy's own
//     namespace) select the host copies of that namespace's pods
//     (translate.HostLabelSelector);
//   - a peer's namespaceSelector becomes a pod selector on the namespace
//     labels the syncer copies onto every host pod
//     (vcluster.loft.sh/ns-label-<vcluster>-x-<hash(key)>), limited to
//     this virtual cluster's pods, combined with the peer's podSelector;
//   - ipBlock peers, ports and policyTypes are kept.
//
// A peer can therefore never reach past the virtual cluster's own pods by
// selector (another tenant's or the host's pods carry no managed-by label
// of this virtual cluster).
package networkpolicies

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// HostSpec is the host spec of virtual NetworkPolicy v (see the package
// comment).
func HostSpec(v *networkingv1.NetworkPolicy, tr translate.Translator) networkingv1.NetworkPolicySpec {
	spec := *v.Spec.DeepCopy()
	if sel := tr.HostLabelSelector(&spec.PodSelector, v.Namespace); sel != nil {
		spec.PodSelector = *sel
	}
	for i := range spec.Ingress {
		spec.Ingress[i].From = hostPeers(spec.Ingress[i].From, v.Namespace, tr)
	}
	for i := range spec.Egress {
		spec.Egress[i].To = hostPeers(spec.Egress[i].To, v.Namespace, tr)
	}
	return spec
}

func hostPeers(peers []networkingv1.NetworkPolicyPeer, namespace string, tr translate.Translator) []networkingv1.NetworkPolicyPeer {
	for i, p := range peers {
		switch {
		case p.IPBlock != nil:
			// An address range: as it is.
		case p.NamespaceSelector != nil:
			peers[i] = networkingv1.NetworkPolicyPeer{PodSelector: namespacePeer(p.NamespaceSelector, p.PodSelector, tr)}
		case p.PodSelector != nil:
			peers[i] = networkingv1.NetworkPolicyPeer{PodSelector: tr.HostLabelSelector(p.PodSelector, namespace)}
		}
	}
	return peers
}

// namespacePeer is the host pod selector of a peer that selects pods (pods,
// or every pod when nil) in the virtual namespaces ns selects: the pods'
// keys translated, the namespace's keys as the namespace labels on host
// pods, and this virtual cluster's managed-by label.
func namespacePeer(ns, pods *metav1.LabelSelector, tr translate.Translator) *metav1.LabelSelector {
	out := tr.HostLabelSelector(pods, "")
	if out == nil {
		out = tr.HostLabelSelector(&metav1.LabelSelector{}, "")
	}
	for k, v := range ns.MatchLabels {
		out.MatchLabels[tr.NamespaceLabelKey(k)] = v
	}
	for _, e := range ns.MatchExpressions {
		e := *e.DeepCopy()
		e.Key = tr.NamespaceLabelKey(e.Key)
		out.MatchExpressions = append(out.MatchExpressions, e)
	}
	return out
}
