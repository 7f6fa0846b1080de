package policy

// HostNodeName is the spec.nodeName a host pod gets for the tenant's
// nodeName (policies.isolation.nodeName): "" — the host's scheduler then
// places the pod, within the enforced node selector and tolerations —
// unless the virtual cluster shows the host's real nodes
// (sync.fromHost.nodes) and visible reports that the tenant sees this one.
// A tenant that names a node directly skips the scheduler, its taints and
// the enforced node selector; with fake nodes every name it could pick is
// a host node it was never given. enforce false keeps nodeName as it is.
func HostNodeName(nodeName string, enforce, realNodes bool, visible func(string) bool) string {
	if nodeName == "" || !enforce {
		return nodeName
	}
	if realNodes && visible != nil && visible(nodeName) {
		return nodeName
	}
	return ""
}
