package policy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeConditionTaintPrefix starts the keys of the taints Kubernetes itself
// puts on nodes for their conditions (node.kubernetes.io/not-ready,
// …/unreachable, …/unschedulable, …/memory-pressure and the like,
// https://kubernetes.io/docs/reference/labels-annotations-taints/). Pods
// tolerate them routinely (DefaultTolerationSeconds admission adds two to
// every pod; DaemonSet pods get the others), and tolerating them does not
// reach a node set aside for someone else.
const NodeConditionTaintPrefix = "node.kubernetes.io/"

// HostTolerations splits a tenant pod's tolerations into those its host
// pod may carry and those it may not (policies.isolation.tolerations). A
// toleration is kept when it tolerates only node-condition taints (its key
// starts with NodeConditionTaintPrefix) or when one of enforced
// (sync.toHost.pods.enforceTolerations, which every host pod gets anyway)
// tolerates every taint it does. Any other toleration would let the tenant
// onto host nodes tainted to keep workloads off, the control plane's
// (node-role.kubernetes.io/control-plane) first; an empty key with
// operator Exists tolerates every taint. The inputs are not modified; kept
// keeps the tenant's order.
func HostTolerations(tenant, enforced []corev1.Toleration) (kept, dropped []corev1.Toleration) {
	for _, t := range tenant {
		ok := t.Key != "" && strings.HasPrefix(t.Key, NodeConditionTaintPrefix)
		for i := 0; !ok && i < len(enforced); i++ {
			ok = covers(enforced[i], t)
		}
		if ok {
			kept = append(kept, t)
		} else {
			dropped = append(dropped, t)
		}
	}
	return kept, dropped
}

// covers tells whether toleration e tolerates every taint t tolerates.
// tolerationSeconds is not compared: it only bounds how long a NoExecute
// taint is tolerated.
func covers(e, t corev1.Toleration) bool {
	if e.Effect != "" && e.Effect != t.Effect {
		return false
	}
	exists := func(x corev1.Toleration) bool { return x.Operator == corev1.TolerationOpExists }
	switch {
	case e.Key == "" && exists(e):
		return true // every taint of e's effect
	case e.Key != t.Key:
		return false
	case exists(e):
		return true
	default: // e is key=value: t must be the same key=value
		return !exists(t) && e.Value == t.Value
	}
}

// TolerationString is a toleration as `kubectl describe` prints it:
// key=value:Effect, key:Effect for Exists, :Effect or "" for an empty key.
func TolerationString(t corev1.Toleration) string {
	s := t.Key
	if t.Operator != corev1.TolerationOpExists && t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	if s == "" {
		s = "(every taint)"
	}
	return s
}
