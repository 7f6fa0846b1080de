// Package serviceaccounts syncs virtual ServiceAccounts to the host
// (sync.toHost.serviceAccounts, off by default as in vCluster), so that
// host workload identity (an IAM role for service accounts, a cloud
// workload identity) can be given per tenant service account: the host
// copy NAME-x-NAMESPACE-x-VCLUSTER carries the virtual account's labels
// and annotations (an eks.amazonaws.com/role-arn annotation, say), its
// imagePullSecrets renamed to their host copies (which count as used),
// token automount off; with it on, a host pod runs as the host copy of its
// virtual pod's service account instead of the shared vc-workload-NAME
// (pods.Environment.SyncServiceAccounts). Tokens stay the virtual
// cluster's: a host token is never mounted into a tenant pod.
package serviceaccounts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// HostFields sets the fields of host copy h of virtual ServiceAccount v:
// its image pull secrets renamed, no token Secrets, token automount off.
func HostFields(h, v *corev1.ServiceAccount, tr translate.Translator) {
	h.ImagePullSecrets = nil
	for _, s := range v.ImagePullSecrets {
		h.ImagePullSecrets = append(h.ImagePullSecrets, corev1.LocalObjectReference{Name: tr.HostName(s.Name, v.Namespace)})
	}
	h.Secrets = nil
	h.AutomountServiceAccountToken = ptr.To(false)
}

// References are the Secrets sa uses: its image pull secrets.
func References(sa *corev1.ServiceAccount) []mapping.Ref {
	var out []mapping.Ref
	for _, s := range sa.ImagePullSecrets {
		if s.Name != "" {
			out = append(out, mapping.Ref{Kind: "Secret", Namespace: sa.Namespace, Name: s.Name})
		}
	}
	return out
}

// Ref is the mapping store's name of sa, as a referrer.
func Ref(sa *corev1.ServiceAccount) mapping.Ref {
	return mapping.Ref{Kind: "ServiceAccount", Namespace: sa.Namespace, Name: sa.Name}
}
