package deploy

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ServerURLs are the https URLs at which clients may reach the API server
// of a virtual cluster whose host Service is svc, in the order they are
// tried: the Service's cluster IP (the host's nodes and pods, the local
// host), then the addresses it is exposed at — its load balancer's IPs
// and host names and its externalIPs (port 443), each node's ExternalIP
// then InternalIP at the https node port (NodePort and LoadBalancer) —,
// then the host names of ingress (port 443; nil for none). The API
// server's certificate covers each of them
// (controlplane.ServingSANs). Duplicates are dropped.
func ServerURLs(svc *corev1.Service, nodes []corev1.Node, ingress *networkingv1.Ingress) []string {
	var out []string
	add := func(host string, port int32) {
		if host == "" {
			return
		}
		u := "https://" + net.JoinHostPort(host, strconv.Itoa(int(port)))
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	var port, nodePort int32 = 443, 0
	for _, p := range svc.Spec.Ports {
		if p.Name == "https" {
			port, nodePort = p.Port, p.NodePort
		}
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		add(svc.Spec.ClusterIP, port)
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		add(in.IP, port)
		add(in.Hostname, port)
	}
	for _, ip := range svc.Spec.ExternalIPs {
		add(ip, port)
	}
	if nodePort != 0 {
		for _, typ := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP} {
			for _, n := range nodes {
				for _, a := range n.Status.Addresses {
					if a.Type == typ {
						add(a.Address, nodePort)
					}
				}
			}
		}
	}
	if ingress != nil {
		for _, r := range ingress.Spec.Rules {
			add(r.Host, 443)
		}
	}
	return out
}

// Servers reads the host Service of virtual cluster name in host
// namespace namespace, the host's nodes when it has node ports, and its
// Ingress when there is one, and returns their ServerURLs. Errors name the
// object.
func Servers(ctx context.Context, host kubernetes.Interface, name, namespace string) ([]string, error) {
	svc, nodes, err := controlplane.ExposedService(ctx, host, name, namespace)
	if err != nil {
		return nil, err
	}
	ingress, err := host.NetworkingV1().Ingresses(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		ingress = nil
	case err != nil:
		return nil, fmt.Errorf("host ingress %s/%s: %w", namespace, name, err)
	}
	return ServerURLs(svc, nodes, ingress), nil
}

// FirstReachable returns the first of servers that answers (Reachable):
// the first is given up to first (kube-proxy may program a new Service a
// few seconds after its endpoint became ready), each other 2 s. It
// returns "" when none answers.
func FirstReachable(ctx context.Context, servers []string, first time.Duration) string {
	for i, s := range servers {
		if i == 0 && ReachableWithin(ctx, s, first) || i > 0 && Reachable(ctx, s, 2*time.Second) {
			return s
		}
	}
	return ""
}
