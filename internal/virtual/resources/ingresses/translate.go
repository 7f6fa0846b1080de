// Package ingresses syncs virtual Ingresses to the host
// (sync.toHost.ingresses, off by default as in vCluster), as the reference
// example shows (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync, "How does
// syncing work?"; https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync/to-host/networking/ingresses):
// the host copy is NAME-x-NAMESPACE-x-VCLUSTER in the host namespace, its
// Service backends and TLS Secrets renamed the same way, its
// ingressClassName kept; the TLS Secrets it names count as used, so the
// selective Secret sync copies them; the host's status (the load
// balancer's addresses) flows back to the virtual Ingress.
package ingresses

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// HostSpec is the host spec of virtual Ingress v: the Service names of its
// default backend and of every path's backend, and the Secret names of its
// TLS entries, translated to their host names; everything else as it is
// (a resource backend names an object of another API, which is not synced,
// and stays as written).
func HostSpec(v *networkingv1.Ingress, tr translate.Translator) networkingv1.IngressSpec {
	spec := *v.Spec.DeepCopy()
	backend := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			b.Service.Name = tr.HostName(b.Service.Name, v.Namespace)
		}
	}
	backend(spec.DefaultBackend)
	for i := range spec.Rules {
		if http := spec.Rules[i].HTTP; http != nil {
			for j := range http.Paths {
				backend(&http.Paths[j].Backend)
			}
		}
	}
	for i := range spec.TLS {
		if spec.TLS[i].SecretName != "" {
			spec.TLS[i].SecretName = tr.HostName(spec.TLS[i].SecretName, v.Namespace)
		}
	}
	return spec
}

// References are the objects Ingress ing uses that are synced only when
// used: the Secrets of its TLS entries.
func References(ing *networkingv1.Ingress) []mapping.Ref {
	var out []mapping.Ref
	seen := map[string]bool{}
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" && !seen[t.SecretName] {
			seen[t.SecretName] = true
			out = append(out, mapping.Ref{Kind: "Secret", Namespace: ing.Namespace, Name: t.SecretName})
		}
	}
	return out
}

// Ref is the mapping store's name of Ingress ing, as a referrer.
func Ref(ing *networkingv1.Ingress) mapping.Ref {
	return mapping.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
}
