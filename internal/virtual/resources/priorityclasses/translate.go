// Package priorityclasses syncs the tenant's PriorityClasses to the host
// (sync.toHost.priorityClasses), as vCluster does: each becomes the
// cluster-scoped host class vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER, and
// host pods name that class (internal/virtual/resources/pods).
package priorityclasses

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// SystemPrefix starts the names of the classes Kubernetes reserves
// (system-node-critical, system-cluster-critical): the virtual API server
// makes its own, and they are never synced nor named by a host pod.
const SystemPrefix = "system-"

// Synced reports whether virtual class pc goes to the host: not a system
// class, not a read-only copy of a host class (sync.fromHost.priorityClasses).
func Synced(pc *schedulingv1.PriorityClass) bool {
	return !strings.HasPrefix(pc.Name, SystemPrefix) && pc.Labels[fromhost.Label] != "true"
}

// Spec is the content of a host class.
type Spec struct {
	Value            int32
	PreemptionPolicy *corev1.PreemptionPolicy
	Description      string
}

// HostSpec is the host copy's content from virtual class v: its value,
// preemption policy and description; never globalDefault, which would make
// it the default of every pod of the host cluster, not only the tenant's.
func HostSpec(v *schedulingv1.PriorityClass) Spec {
	spec := Spec{Value: v.Value, Description: v.Description}
	if v.PreemptionPolicy != nil {
		p := *v.PreemptionPolicy
		spec.PreemptionPolicy = &p
	}
	return spec
}

// Apply writes spec into host class h (GlobalDefault false).
func (spec Spec) Apply(h *schedulingv1.PriorityClass) {
	h.Value, h.PreemptionPolicy, h.Description, h.GlobalDefault = spec.Value, spec.PreemptionPolicy, spec.Description, false
}

// Immutable reports whether host class h differs from spec in a field the
// API server does not let change (value, preemptionPolicy): the host copy
// must then be replaced.
func (spec Spec) Immutable(h *schedulingv1.PriorityClass) bool {
	want := corev1.PreemptLowerPriority
	if spec.PreemptionPolicy != nil {
		want = *spec.PreemptionPolicy
	}
	have := corev1.PreemptLowerPriority
	if h.PreemptionPolicy != nil {
		have = *h.PreemptionPolicy
	}
	return h.Value != spec.Value || !equality.Semantic.DeepEqual(want, have)
}
