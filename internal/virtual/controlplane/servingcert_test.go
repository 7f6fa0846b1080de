package controlplane

import (
	"net"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// ServingSANs covers every address the Service publishes, and the nodes'
// only when it has node ports.
func TestServingSANs(t *testing.T) {
	nodes := []corev1.Node{{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.0.4"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.4"},
		{Type: corev1.NodeHostName, Address: "node-a"}}}}}
	svc := func(typ corev1.ServiceType, mod func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{Spec: corev1.ServiceSpec{Type: typ, ClusterIP: "10.96.0.20"}}
		if mod != nil {
			mod(s)
		}
		return s
	}
	o := PodOptions{Name: "vc1", Namespace: "ns1", PodIP: "10.244.0.5", ExtraSANs: []string{"vc.example.com"}}
	tests := []struct {
		name         string
		o            PodOptions
		svc          *corev1.Service
		ips, without []string
		dns          []string
	}{
		{"cluster IP: no node addresses", o, svc(corev1.ServiceTypeClusterIP, nil),
			[]string{"10.96.0.20", "10.244.0.5"}, []string{"10.0.0.4"}, []string{"vc.example.com", "vc1.ns1.svc"}},
		{"node port: the nodes' internal and external IPs", o, svc(corev1.ServiceTypeNodePort, nil),
			[]string{"10.0.0.4", "203.0.113.4"}, nil, nil},
		{"load balancer: its status, requested IP, external IPs", o, svc(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Spec.LoadBalancerIP = "192.0.2.7"
			s.Spec.ExternalIPs = []string{"192.0.2.8"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}, {Hostname: "lb.example.net"}}
		}), []string{"192.0.2.7", "192.0.2.8", "192.0.2.10", "10.0.0.4"}, nil, []string{"lb.example.net"}},
		{"ingress host", PodOptions{Name: "vc1", Namespace: "ns1", IngressHost: "vc1.example.org"}, svc(corev1.ServiceTypeClusterIP, nil),
			nil, nil, []string{"vc1.example.org"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ServingSANs(tt.o, tt.svc, nodes)
			has := func(ip string) bool { return slices.ContainsFunc(s.IPs, net.ParseIP(ip).Equal) }
			for _, ip := range tt.ips {
				if !has(ip) {
					t.Errorf("IPs %v lack %s", s.IPs, ip)
				}
			}
			for _, ip := range tt.without {
				if has(ip) {
					t.Errorf("IPs %v have %s", s.IPs, ip)
				}
			}
			for _, d := range tt.dns {
				if !slices.Contains(s.DNSNames, d) {
					t.Errorf("DNS names %v lack %s", s.DNSNames, d)
				}
			}
			if slices.Contains(s.DNSNames, "node-a") || slices.Contains(s.DNSNames, "") {
				t.Errorf("DNS names %v: want no node host name and no empty name", s.DNSNames)
			}
		})
	}
}
