package deploy

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// The cluster IP first, then each address the API server is exposed at.
func TestServerURLs(t *testing.T) {
	nodes := []corev1.Node{{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.0.4"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.4"}}}}}
	ports := func(nodePort int32) []corev1.ServicePort {
		return []corev1.ServicePort{{Name: "https", Port: 443, NodePort: nodePort}}
	}
	tests := []struct {
		name    string
		svc     corev1.Service
		ingress *networkingv1.Ingress
		want    []string
	}{
		{"cluster IP", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20", Ports: ports(0)}}, nil,
			[]string{"https://10.96.0.20:443"}},
		{"node port: external addresses before internal", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20", Ports: ports(31443)}}, nil,
			[]string{"https://10.96.0.20:443", "https://203.0.113.4:31443", "https://10.0.0.4:31443"}},
		{"load balancer and ingress", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20", Ports: ports(31443), ExternalIPs: []string{"192.0.2.8"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}, {Hostname: "lb.example.net"}}}}},
			&networkingv1.Ingress{Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "vc1.example.org"}}}},
			[]string{"https://10.96.0.20:443", "https://192.0.2.10:443", "https://lb.example.net:443", "https://192.0.2.8:443",
				"https://203.0.113.4:31443", "https://10.0.0.4:31443", "https://vc1.example.org:443"}},
		{"IPv6", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "fd00::20", Ports: ports(0)}}, nil, []string{"https://[fd00::20]:443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServerURLs(&tt.svc, nodes, tt.ingress); !slices.Equal(got, tt.want) {
				t.Errorf("ServerURLs:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}
