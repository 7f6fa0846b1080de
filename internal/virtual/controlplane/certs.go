package controlplane

import (
	"fmt"
	"maps"
	"net"
	"os"

	"github.com/clustersync/clustersync/internal/pki"
)

// ensureCerts creates the control plane's CA, serving and client certificates
// and the service-account key pair unless they already exist, and (re)writes
// the kubeconfigs for the API server at server.
func ensureCerts(l Layout, name, server string) error {
	if _, err := os.Stat(l.PKI("ca.crt")); os.IsNotExist(err) {
		if err := generateCerts(l, name, SANs{}); err != nil {
			return fmt.Errorf("generate certificates in %s: %w", l.PKI(""), err)
		}
	}
	ca, err := pki.LoadCA(l.PKI("ca.crt"), l.PKI("ca.key"))
	if err != nil {
		return err
	}
	// Certificates added after a virtual cluster was first made.
	for file, r := range laterRequests() {
		if _, err := os.Stat(l.PKI(file + ".crt")); os.IsNotExist(err) {
			c, k, err := ca.Issue(r)
			if err != nil {
				return err
			}
			if err := pki.WriteFiles(map[string][]byte{l.PKI(file + ".crt"): c, l.PKI(file + ".key"): k}); err != nil {
				return err
			}
		}
	}
	read := func(n string) []byte { b, _ := os.ReadFile(l.PKI(n)); return b }
	admin := pki.Kubeconfig(name, server, ca.CertPEM(), read("admin.crt"), read("admin.key"))
	if err := pki.WriteKubeconfig(admin, l.AdminKubeconfig()); err != nil {
		return err
	}
	kcm := pki.Kubeconfig(name, server, ca.CertPEM(), read("controller-manager.crt"), read("controller-manager.key"))
	if err := pki.WriteKubeconfig(kcm, l.ControllerManagerKubeconfig()); err != nil {
		return err
	}
	scheduler := pki.Kubeconfig(name, server, ca.CertPEM(), read("scheduler.crt"), read("scheduler.key"))
	return pki.WriteKubeconfig(scheduler, l.SchedulerKubeconfig())
}

// SANs are the names and addresses the API server's certificate covers
// beyond loopback, localhost, kubernetes, kubernetes.default… and the
// virtual cluster's name.
type SANs struct {
	DNSNames []string
	IPs      []net.IP
}

// apiServerRequest is the API server's serving certificate for virtual
// cluster name with the extra names in sans.
func apiServerRequest(name string, sans SANs) pki.Request {
	dns := append([]string{
		"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", name,
	}, sans.DNSNames...)
	ips := append([]net.IP{net.ParseIP("127.0.0.1")}, sans.IPs...)
	return pki.Request{CommonName: "kube-apiserver", Server: true, IPs: ips, DNSNames: dns}
}

// KubeletClientCommonName is the common name of the API server's kubelet
// client certificate, the only client the syncer's kubelet proxy
// (internal/virtual/kubeletproxy) serves.
const KubeletClientCommonName = "kube-apiserver-kubelet-client"

// FrontProxyClientCommonName is the common name of the API server's
// front-proxy client certificate (--proxy-client-cert-file), with which it
// passes requests of aggregated APIs on, naming the caller in
// X-Remote-User/-Group/-Extra-; the syncer's metrics API
// (internal/virtual/metricsapi) serves only it.
const FrontProxyClientCommonName = "front-proxy-client"

// The virtual Service in front of the syncer's metrics API
// (metrics-server's names), and the name its serving certificate is for:
// the aggregation layer checks the certificate of Service NAME in
// NAMESPACE for NAME.NAMESPACE.svc.
const (
	MetricsAPIServiceNamespace = "kube-system"
	MetricsAPIServiceName      = "metrics-server"
	MetricsAPIServerName       = MetricsAPIServiceName + "." + MetricsAPIServiceNamespace + ".svc"
)

// laterRequests are the certificates added after the first virtual
// clusters were made, issued when missing: between the API server and the
// syncer's endpoints, the API server's kubelet client certificate and the
// kubelet proxy's serving certificate for loopback, where the fake nodes
// say their kubelet is (internal/virtual/kubeletproxy), the API server's
// front-proxy client certificate and the metrics API's serving certificate
// (internal/virtual/metricsapi); kube-scheduler's client certificate (the
// virtual scheduler), whose user system:kube-scheduler Kubernetes' default
// RBAC binds.
func laterRequests() map[string]pki.Request {
	return map[string]pki.Request{
		"scheduler":                {CommonName: "system:kube-scheduler", Client: true},
		"apiserver-kubelet-client": {CommonName: KubeletClientCommonName, Client: true},
		"kubelet-server": {CommonName: "clustersync-kubelet-proxy", Server: true,
			// *.nodes.vcluster.com: the fake nodes' kubelet host names of
			// networking.advanced.proxyKubelets.byHostname
			// (kubeletproxy.NodeSuffix).
			IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost", "*.nodes.vcluster.com"}},
		"front-proxy-client": {CommonName: FrontProxyClientCommonName, Client: true},
		"metrics-api":        {CommonName: MetricsAPIServerName, Server: true, DNSNames: []string{MetricsAPIServerName}},
	}
}

func generateCerts(l Layout, name string, sans SANs) error {
	ca, err := pki.NewCA("clustersync-" + name + "-ca")
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	files := map[string][]byte{l.PKI("ca.crt"): ca.CertPEM(), l.PKI("ca.key"): caKey}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	issue := func(file string, r pki.Request) error {
		c, k, err := ca.Issue(r)
		if err != nil {
			return err
		}
		files[l.PKI(file+".crt")], files[l.PKI(file+".key")] = c, k
		return nil
	}
	requests := map[string]pki.Request{
		"apiserver":             apiServerRequest(name, sans),
		"etcd-server":           {CommonName: "etcd", Server: true, Client: true, IPs: loopback, DNSNames: []string{"localhost"}},
		"apiserver-etcd-client": {CommonName: "kube-apiserver-etcd-client", Client: true},
		"admin":                 {CommonName: "clustersync-admin", Organization: []string{"system:masters"}, Client: true},
		"controller-manager":    {CommonName: "system:kube-controller-manager", Client: true},
	}
	maps.Copy(requests, laterRequests())
	for file, r := range requests {
		if err := issue(file, r); err != nil {
			return err
		}
	}
	priv, pub, err := pki.NewSigningKeyPEM()
	if err != nil {
		return err
	}
	files[l.PKI("sa.key")], files[l.PKI("sa.pub")] = priv, pub
	return pki.WriteFiles(files)
}
