package config

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Pod Security Standards levels of policies.podSecurityStandard
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/).
const (
	// PodSecurityPrivileged lets every pod through: the check is off.
	PodSecurityPrivileged = "privileged"
	// PodSecurityBaseline refuses the known privilege escalations:
	// privileged containers, host namespaces, hostPath volumes, host ports,
	// added capabilities and the like. clustersync's default.
	PodSecurityBaseline = "baseline"
	// PodSecurityRestricted is baseline plus the pod hardening best
	// practices (non-root, no privilege escalation, seccomp, dropped
	// capabilities).
	PodSecurityRestricted = "restricted"
)

// Policies are the rules the syncer and the chart enforce on the tenants
// of a virtual cluster (vCluster's `policies:`, with vCluster's keys).
// Unlike vCluster, whose policies are all off by default, clustersync is
// secure by default: pods are checked at the baseline level, the tenant's
// host namespace gets a ResourceQuota, a LimitRange and a NetworkPolicy,
// and the isolation rules are on (docs/security.md).
type Policies struct {
	// PodSecurityStandard is the Pod Security Standards level every pod
	// is checked against before it is created or updated on the host:
	// privileged, baseline or restricted. A pod that fails stays in the
	// virtual cluster, Pending, with a Warning event naming the rule.
	// vCluster's key; vCluster's default is no check, clustersync's is
	// baseline (an empty value keeps it; write privileged to switch the
	// check off).
	PodSecurityStandard string `json:"podSecurityStandard"`
	// ResourceQuota is the ResourceQuota of the host namespace.
	ResourceQuota ResourceQuota `json:"resourceQuota"`
	// LimitRange is the LimitRange of the host namespace.
	LimitRange LimitRange `json:"limitRange"`
	// NetworkPolicy is the NetworkPolicy of the host namespace's tenant
	// pods.
	NetworkPolicy NetworkPolicy `json:"networkPolicy"`
	// Isolation holds clustersync's own rules on what tenant objects may
	// ask of the host; vCluster has no such keys.
	Isolation Isolation `json:"isolation"`

	// CentralAdmission is vCluster's list of webhooks enforced inside the
	// virtual cluster (a vCluster Pro feature): accepted, not acted on.
	CentralAdmission any `json:"centralAdmission,omitempty" config:"vcluster"`
}

// ResourceQuota configures the ResourceQuota the chart creates in the host
// namespace; it counts the control plane pod as well as the tenant's.
type ResourceQuota struct {
	// Enabled creates the quota. auto (vCluster's default) means on unless
	// limitRange.enabled is false; vCluster's auto is on only when the
	// limit range is on.
	Enabled AutoSwitch `json:"enabled"`
	// Labels are added to the ResourceQuota.
	Labels map[string]string `json:"labels"`
	// Annotations are added to the ResourceQuota.
	Annotations map[string]string `json:"annotations"`
	// Quota is the quota's spec.hard: resource name to quantity, e.g.
	// requests.cpu: 10, count/pods: 20.
	Quota map[string]resource.Quantity `json:"quota"`
	// ScopeSelector is the quota's spec.scopeSelector, as Kubernetes
	// writes it.
	ScopeSelector any `json:"scopeSelector,omitempty"`
	// Scopes are the quota's spec.scopes.
	Scopes []string `json:"scopes"`
}

// LimitRange configures the LimitRange the chart creates in the host
// namespace: per-container defaults, so that every pod fits the quota.
type LimitRange struct {
	// Enabled creates the limit range. auto (vCluster's default) means on
	// unless resourceQuota.enabled is false.
	Enabled AutoSwitch `json:"enabled"`
	// Labels are added to the LimitRange.
	Labels map[string]string `json:"labels"`
	// Annotations are added to the LimitRange.
	Annotations map[string]string `json:"annotations"`
	// Default is the default limit of a container that sets none.
	Default map[string]resource.Quantity `json:"default"`
	// DefaultRequest is the default request of a container that sets none.
	DefaultRequest map[string]resource.Quantity `json:"defaultRequest"`
	// Min is the least a container may request.
	Min map[string]resource.Quantity `json:"min"`
	// Max is the most a container may use as its limit.
	Max map[string]resource.Quantity `json:"max"`
}

// On tells whether the chart creates the ResourceQuota: enabled true, or
// auto while the limit range is not switched off.
func (q ResourceQuota) On(lr LimitRange) bool { return q.Enabled.Resolve(lr.Enabled != AutoSwitchOff) }

// On tells whether the chart creates the LimitRange: enabled true, or auto
// while the quota is not switched off.
func (lr LimitRange) On(q ResourceQuota) bool { return lr.Enabled.Resolve(q.Enabled != AutoSwitchOff) }

// NetworkPolicy configures the NetworkPolicies the chart creates in the
// host namespace: tenant pods may reach each other, the virtual cluster's
// API server and DNS, the host's DNS, and the outside world
// (outgoingConnections), but not the control plane pod's other ports
// (etcd, the syncer's kubelet proxy), other namespaces' pods or the
// private address ranges.
type NetworkPolicy struct {
	// Enabled creates the policies. vCluster's default is false,
	// clustersync's true.
	Enabled bool `json:"enabled"`
	// Labels are added to the NetworkPolicies.
	Labels map[string]string `json:"labels"`
	// Annotations are added to the NetworkPolicies.
	Annotations map[string]string `json:"annotations"`
	// FallbackDNS is an outside DNS server (an IP address) tenant pods may
	// reach on port 53.
	FallbackDNS string `json:"fallbackDns"`
	// OutgoingConnections says where tenant pods may connect outside the
	// namespace.
	OutgoingConnections OutgoingConnections `json:"outgoingConnections"`
	// ExtraControlPlaneRules are more egress rules (NetworkPolicyEgressRule,
	// as Kubernetes writes them) for the control plane pod (vCluster up
	// to 0.30; controlPlane.egress since).
	ExtraControlPlaneRules []any `json:"extraControlPlaneRules"`
	// ExtraWorkloadRules are more egress rules (NetworkPolicyEgressRule)
	// for the tenant's pods (vCluster up to 0.30; workload.egress since).
	ExtraWorkloadRules []any `json:"extraWorkloadRules"`
	// ControlPlane are more rules of the control plane pod's policy
	// (vCluster 0.31 on), added to ExtraControlPlaneRules.
	ControlPlane NetworkPolicyRules `json:"controlPlane"`
	// Workload are more rules of the tenant's pods' policy, and where
	// they may connect outside the host (vCluster 0.31 on).
	Workload WorkloadNetworkPolicy `json:"workload"`
}

// NetworkPolicyRules are ingress and egress rules added to a policy, as
// Kubernetes writes them.
type NetworkPolicyRules struct {
	// Ingress are more ingress rules.
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress"`
	// Egress are more egress rules.
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress"`
}

// WorkloadNetworkPolicy is vCluster's policies.networkPolicy.workload.
type WorkloadNetworkPolicy struct {
	// Ingress are more ingress rules of the tenant's pods.
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress"`
	// Egress are more egress rules of the tenant's pods, added to
	// ExtraWorkloadRules.
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress"`
	// PublicEgress is where tenant pods may connect outside the host;
	// when the file leaves it out, outgoingConnections (the older key)
	// says so. The chart reads it (templates/networkpolicy.yaml): enabled
	// true unless it says false, its cidr and except each when given,
	// else outgoingConnections'.
	PublicEgress *PublicEgress `json:"publicEgress,omitempty"`
}

// PublicEgress is vCluster's policies.networkPolicy.workload.publicEgress.
type PublicEgress struct {
	// Enabled allows the range; false allows no address outside the host.
	Enabled *bool `json:"enabled,omitempty"`
	// CIDR is the range, e.g. 0.0.0.0/0; "" for outgoingConnections'.
	CIDR string `json:"cidr"`
	// Except are ranges inside CIDR that are not allowed; none given for
	// outgoingConnections'.
	Except []string `json:"except"`
}

// OutgoingConnections says where tenant pods may connect outside the host
// namespace.
type OutgoingConnections struct {
	// IPBlock is the address range tenant pods may reach, with exceptions.
	IPBlock IPBlock `json:"ipBlock"`

	// Platform is vCluster's switch for reaching the vCluster Platform:
	// accepted, not acted on.
	Platform any `json:"platform,omitempty" config:"vcluster"`
}

// IPBlock is a CIDR with exceptions, as in a NetworkPolicy's ipBlock.
type IPBlock struct {
	// CIDR is the range, e.g. 0.0.0.0/0.
	CIDR string `json:"cidr"`
	// Except are ranges inside CIDR that are not allowed.
	Except []string `json:"except"`
}

// Isolation holds the rules that keep a tenant's objects from reaching
// beyond its host namespace; each is on by default and documented in
// docs/security.md. They are clustersync's own keys.
type Isolation struct {
	// NodeName clears spec.nodeName of host pods, so the host schedules
	// them, unless sync.fromHost.nodes is enabled and the node is one the
	// virtual cluster shows.
	NodeName bool `json:"nodeName"`
	// Tolerations keeps on the host only the tolerations of a pod that
	// tolerate the node-condition taints (node.kubernetes.io/…) or are
	// covered by sync.toHost.pods.enforceTolerations, so a tenant cannot
	// schedule onto tainted host nodes such as the control plane's.
	Tolerations bool `json:"tolerations"`
	// ExternalIPs strips spec.externalIPs of Services on the host, with a
	// Warning event on the virtual Service.
	ExternalIPs bool `json:"externalIPs"`
	// Endpoints keeps, in Endpoints and EndpointSlices the tenant writes
	// itself, only the addresses of the tenant's own pods, with a Warning
	// event naming the addresses left out.
	Endpoints bool `json:"endpoints"`
}
