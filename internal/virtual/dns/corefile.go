// Package dns is the DNS server of a virtual cluster: CoreDNS
// (https://coredns.io), embedded in the clustersync binary and run as the
// `coredns` container of the control plane pod
// (charts/virtual-cluster/templates/statefulset.yaml). Its kubernetes plugin
// watches the virtual API server, so tenant pods resolve the virtual
// cluster's Services (svc.ns.svc.cluster.local, headless Services' pod
// records, pod A records) to virtual addresses; its forward plugin sends
// every other name to the resolver of the pod (/etc/resolv.conf, the host's),
// as vCluster's CoreDNS does. The host copy of the virtual kube-system/kube-dns
// Service selects the control plane pod at Port (see the services syncer).
package dns

import (
	"fmt"
	"strings"
)

// The default ports of the DNS server in the control plane pod. Port is
// vCluster's 1053 (the kube-dns Service's port 53 leads to it; a non-root
// process cannot bind 53); Health serves /health for the liveness probe,
// Ready /ready for readiness (ready once the kubernetes plugin has synced),
// Metrics Prometheus metrics on /metrics.
const (
	Port        = 1053
	HealthPort  = 8180
	ReadyPort   = 8181
	MetricsPort = 9153
)

// Options describe one virtual cluster's DNS server.
type Options struct {
	// Kubeconfig is the virtual cluster's kubeconfig file (read-only use:
	// services, endpoint slices, namespaces, pods).
	Kubeconfig string
	// ClusterDomain is the virtual cluster's DNS domain; "" means
	// cluster.local.
	ClusterDomain string
	// Upstream are the resolvers for every other name: addresses
	// ("10.0.0.10", "10.0.0.10:53") or a resolv.conf path; empty means
	// /etc/resolv.conf, the pod's own resolver.
	Upstream []string
	// FallbackHostCluster asks the upstream for the names of the cluster
	// domain the virtual cluster does not have (the host's DNS, when the
	// upstream is the pod's resolver): vCluster's
	// networking.advanced.fallbackHostCluster.
	FallbackHostCluster bool
	// NodeHostnames answers NAME.nodes.vcluster.com, the kubelet host names
	// of the fake nodes, with the virtual kubernetes Service's address
	// (whose host Service leads port 10250 to the syncer's kubelet proxy),
	// as vCluster's CoreDNS rewrites them
	// (pkg/coredns/template.go at https://github.com/loft-sh/vcluster/tree/v0.36.1):
	// networking.advanced.proxyKubelets.byHostname.
	NodeHostnames bool
	// TTL is the TTL of answers from the virtual cluster, in seconds; 0
	// means 30.
	TTL int
	// Port, HealthPort, ReadyPort and MetricsPort are the TCP/UDP ports to
	// listen on (all addresses); 0 means the constant of the same name.
	Port, HealthPort, ReadyPort, MetricsPort int
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Port, Port)
	def(&o.HealthPort, HealthPort)
	def(&o.ReadyPort, ReadyPort)
	def(&o.MetricsPort, MetricsPort)
	def(&o.TTL, 30)
	if o.ClusterDomain == "" {
		o.ClusterDomain = "cluster.local"
	}
	if len(o.Upstream) == 0 {
		o.Upstream = []string{"/etc/resolv.conf"}
	}
	return o
}

// Corefile is the CoreDNS configuration for o (the Corefile syntax:
// https://coredns.io/manual/toc/#configuration). It answers authoritatively
// for the cluster domain and the reverse zones, with pod records
// (a-b-c-d.ns.pod.DOMAIN) as `pods insecure` gives them, forwards the rest,
// caches the answers from upstream for TTL seconds, and stops itself on a
// forwarding loop (the loop plugin) rather than flood the upstream. With
// FallbackHostCluster a name of the cluster domain the virtual cluster
// lacks goes to the upstream too.
// Answers for the cluster domain are not cached, as in kubeadm's Corefile
// (a Service changed now answers at once: the DNS conformance spec changes
// an ExternalName and expects the new CNAME within seconds); the records
// still carry TTL. It returns an error naming the
// field when a value would change the Corefile's structure.
func Corefile(o Options) (string, error) {
	o = o.withDefaults()
	check := map[string]string{"Kubeconfig": o.Kubeconfig, "ClusterDomain": o.ClusterDomain}
	for i, u := range o.Upstream {
		check[fmt.Sprintf("Upstream[%d]", i)] = u
	}
	for field, v := range check {
		if v == "" || strings.ContainsAny(v, " \t\r\n{}#\"") {
			return "", fmt.Errorf("dns: %s %q must be a non-empty word without spaces, quotes, braces or #", field, v)
		}
	}
	if o.TTL < 0 || o.TTL > 3600 {
		return "", fmt.Errorf("dns: TTL %d must be between 0 and 3600 seconds", o.TTL)
	}
	for field, p := range map[string]int{"Port": o.Port, "HealthPort": o.HealthPort, "ReadyPort": o.ReadyPort, "MetricsPort": o.MetricsPort} {
		if p < 1 || p > 65535 {
			return "", fmt.Errorf("dns: %s %d must be between 1 and 65535", field, p)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, ".:%d {\n", o.Port)
	fmt.Fprintf(&b, "    errors\n    health :%d\n    ready :%d\n", o.HealthPort, o.ReadyPort)
	if o.NodeHostnames {
		fmt.Fprintf(&b, "    rewrite stop {\n        name regex (.*)\\.nodes\\.vcluster\\.com\\.$ kubernetes.default.svc.%s.\n        answer auto\n    }\n", o.ClusterDomain)
	}
	fmt.Fprintf(&b, "    kubernetes %s in-addr.arpa ip6.arpa {\n", o.ClusterDomain)
	through := "in-addr.arpa ip6.arpa"
	if o.FallbackHostCluster {
		through = o.ClusterDomain + " " + through
	}
	fmt.Fprintf(&b, "        kubeconfig %s\n        pods insecure\n        fallthrough %s\n        ttl %d\n    }\n", o.Kubeconfig, through, o.TTL)
	fmt.Fprintf(&b, "    prometheus :%d\n", o.MetricsPort)
	fmt.Fprintf(&b, "    forward . %s\n", strings.Join(o.Upstream, " "))
	fmt.Fprintf(&b, "    cache %d {\n        disable success %s\n        disable denial %s\n    }\n", o.TTL, o.ClusterDomain, o.ClusterDomain)
	b.WriteString("    loop\n    loadbalance\n}\n")
	return b.String(), nil
}
