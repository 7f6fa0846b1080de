package services

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// DNSBackend is where the host copy of the virtual kube-system/kube-dns
// Service leads: the pod that runs the virtual cluster's DNS server (the
// control plane pod of charts/virtual-cluster, internal/virtual/dns).
type DNSBackend struct {
	// Selector selects that pod in the host namespace, e.g.
	// {app: vcluster, release: NAME}.
	Selector map[string]string
	// Port is the pod's DNS port (UDP and TCP); the Service's port 53
	// leads to it. Other ports (metrics, 9153) keep their target.
	Port int32
}

// isDNSService tells whether v is the virtual cluster's kube-system/kube-dns
// Service, which the syncer bootstraps.
func isDNSService(v *corev1.Service) bool {
	return v.Namespace == "kube-system" && v.Name == "kube-dns"
}

// HostSpec is the host spec for virtual Service v (vCluster's rules,
// https://github.com/loft-sh/vcluster/blob/main/pkg/controllers/resources/services/translate.go):
// the selector scoped to this virtual cluster's pods of the same namespace,
// the health-check port left to the host to allocate, and the clusterIP and
// node ports asked for as the virtual ones, so that in the common case both
// sides share the address and the ports a tenant reads (the host refuses
// them when another Service has them; WithoutRequests then leaves them to
// the host, and the syncer copies the host's back). current is the
// existing host spec (nil on create); its clusterIPs and its allocated node
// ports are kept; an ExternalName Service has no address on either side
// (a host copy that had one loses it), and one that stops being
// ExternalName asks for the virtual address again. When dns is set, the
// kube-dns Service's host copy selects dns's pod and port instead.
func HostSpec(v *corev1.Service, tr translate.Translator, current *corev1.ServiceSpec, dns *DNSBackend) corev1.ServiceSpec {
	spec := *v.Spec.DeepCopy()
	spec.Selector = tr.HostSelector(v.Spec.Selector, v.Namespace)
	if dns != nil && isDNSService(v) {
		spec.Selector = maps.Clone(dns.Selector)
		for i, p := range spec.Ports {
			if p.Port == 53 {
				spec.Ports[i].TargetPort = intstr.FromInt32(dns.Port)
			}
		}
	}
	spec.HealthCheckNodePort = 0
	spec.IPFamilies, spec.IPFamilyPolicy = nil, nil
	if spec.ClusterIP != corev1.ClusterIPNone && spec.ClusterIP != "" {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	hostPorts := map[string]int32{}
	if current != nil {
		if current.ClusterIP != "" && spec.Type != corev1.ServiceTypeExternalName {
			spec.ClusterIP, spec.ClusterIPs = current.ClusterIP, current.ClusterIPs
			spec.IPFamilies, spec.IPFamilyPolicy = current.IPFamilies, current.IPFamilyPolicy
		}
		spec.HealthCheckNodePort = current.HealthCheckNodePort
		for _, p := range current.Ports {
			hostPorts[portKey(p)] = p.NodePort
		}
	}
	for i := range spec.Ports {
		if np := hostPorts[portKey(spec.Ports[i])]; np != 0 {
			spec.Ports[i].NodePort = np
		}
	}
	if spec.Type == corev1.ServiceTypeClusterIP || spec.Type == corev1.ServiceTypeExternalName || spec.Type == "" {
		for i := range spec.Ports {
			spec.Ports[i].NodePort = 0
		}
		spec.HealthCheckNodePort = 0
	}
	return spec
}

// WithoutRequests returns spec without the node ports it asks for that
// current (the host spec, nil on create) has not allocated, and, when ip is
// false, without its clusterIP: what the host allocates itself after it
// refused them (taken by another Service).
func WithoutRequests(spec corev1.ServiceSpec, current *corev1.ServiceSpec, ip bool) corev1.ServiceSpec {
	spec = *spec.DeepCopy()
	allocated := map[string]int32{}
	if current != nil {
		for _, p := range current.Ports {
			allocated[portKey(p)] = p.NodePort
		}
	}
	for i := range spec.Ports {
		if allocated[portKey(spec.Ports[i])] != spec.Ports[i].NodePort {
			spec.Ports[i].NodePort = 0
		}
	}
	if !ip && current == nil {
		spec.ClusterIP, spec.ClusterIPs = "", nil
	}
	return spec
}

func portKey(p corev1.ServicePort) string {
	return fmt.Sprintf("%s/%s/%d", p.Name, p.Protocol, p.Port)
}

// VirtualNodePorts copies the host's allocated node ports onto the virtual
// ports (matched by name, protocol and port), so a tenant reads the ports
// that work on the host nodes. It reports whether anything changed.
func VirtualNodePorts(v *corev1.ServiceSpec, host *corev1.ServiceSpec) bool {
	byKey := map[string]int32{}
	for _, p := range host.Ports {
		byKey[portKey(p)] = p.NodePort
	}
	changed := false
	for i := range v.Ports {
		if np, ok := byKey[portKey(v.Ports[i])]; ok && np != 0 && np != v.Ports[i].NodePort {
			v.Ports[i].NodePort = np
			changed = true
		}
	}
	return changed
}
