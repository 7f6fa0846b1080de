package policy

import "net/netip"

// AllowedAddresses splits the IP addresses of a tenant-written Endpoints or
// EndpointSlice into those of the tenant's own pods (ownPodIPs, the pod IPs
// of the host copies of its pods) and the others
// (policies.isolation.endpoints). A Service without a selector whose
// endpoints the tenant writes itself would otherwise route traffic, from
// the tenant's pods and from anyone using the Service's host copy, to any
// address: another tenant's pod, the host's control plane, the node. IPs
// are compared in their canonical form (netip), so "10.0.0.01" is not
// mistaken for another spelling; an address that is not an IP is left out.
// The input is not modified; allowed keeps its order.
func AllowedAddresses(ips []string, ownPodIPs map[netip.Addr]bool) (allowed, refused []string) {
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err == nil && ownPodIPs[a.Unmap()] {
			allowed = append(allowed, ip)
		} else {
			refused = append(refused, ip)
		}
	}
	return allowed, refused
}

// PodIPSet is the set AllowedAddresses takes, from pod IPs as pods report
// them (status.podIPs); entries that are not IPs are skipped.
func PodIPSet(ips []string) map[netip.Addr]bool {
	out := make(map[netip.Addr]bool, len(ips))
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			out[a.Unmap()] = true
		}
	}
	return out
}
