// Package pdbs syncs virtual PodDisruptionBudgets to the host
// (sync.toHost.podDisruptionBudgets, off by default as in vCluster): the
// host copy's selector matches the host copies of the virtual pods it
// selects (translate.HostLabelSelector), so the host's eviction API, which
// drains nodes, honours the tenant's budget; the host's status (how many
// of those pods are healthy, how many disruptions are allowed) flows back.
package pdbs

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// HostSpec is the host spec of virtual PodDisruptionBudget v: its selector
// translated, minAvailable, maxUnavailable and the unhealthy-pod eviction
// policy as they are.
func HostSpec(v *policyv1.PodDisruptionBudget, tr translate.Translator) policyv1.PodDisruptionBudgetSpec {
	spec := *v.Spec.DeepCopy()
	spec.Selector = tr.HostLabelSelector(v.Spec.Selector, v.Namespace)
	return spec
}
