package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// otherClusterDomain creates virtual cluster fh-c with
// networking.advanced.clusterDomain tenant.local on the real node: a
// StatefulSet's pods search the virtual namespaces of that domain, resolve
// each other's stable names and the API server's in it, and name
// themselves by it in /etc/hosts; the API server's certificate covers
// kubernetes.default.svc.tenant.local. Its fake node's kubelet is read as
// networking.advanced.proxyKubelets serves it (proxyKubelets).
func otherClusterDomain(t *testing.T, hostKubeconfig string) {
	const name, ns, domain = "fh-c", "fh-c-host", "tenant.local"
	path := filepath.Join(t.TempDir(), "vcluster.yaml")
	// proxyKubelets too: checked on the same cluster (proxyKubelets), with
	// the DNS rewrite of the node host names into the other domain.
	if err := os.WriteFile(path, []byte("networking:\n  advanced:\n    clusterDomain: "+domain+"\n    proxyKubelets: {byHostname: true, byIP: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	out := cli(t, "virtual", "create", name, "-n", ns, "-f", path, "--kubeconfig-out", kubeconfig)
	t.Cleanup(func() {
		if out, err := cliErr("virtual", "delete", name, "-n", ns, "--delete-namespace"); err != nil {
			t.Errorf("virtual delete %s: %v\n%s", name, err, out)
		}
	})
	t.Logf("virtual create (clusterDomain %s):\n%s", domain, out)
	virtual := clientFor(t, kubeconfig)
	labels := map[string]string{"app": "peer"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "peers", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}}
	testenv.Eventually(t, time.Minute, func() error { return ignoreExists(virtual.Create(ctx, svc)) })
	ips := runPeers(t, virtual, labels, config.DefaultRewriteHostsImage, nil)
	var kube corev1.Service
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &kube); err != nil {
		t.Fatal(err)
	}
	kexec := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "exec", "peer-0", "--"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := kexec("cat", "/etc/resolv.conf"); err != nil || !strings.Contains(out, "search default.svc."+domain+" svc."+domain+" "+domain) {
		t.Errorf("/etc/resolv.conf of peer-0 (%v) does not search the virtual domain %s:\n%s", err, domain, out)
	}
	if out, err := kexec("cat", "/etc/hosts"); err != nil || !strings.Contains(out, "peer-0.peers.default.svc."+domain) {
		t.Errorf("/etc/hosts of peer-0 (%v) does not name its FQDN in %s:\n%s", err, domain, out)
	}
	for fqdn, want := range map[string]string{
		"peer-1.peers.default.svc." + domain: ips["peer-1"],
		"kubernetes.default.svc." + domain:   kube.Spec.ClusterIP,
	} {
		testenv.Eventually(t, time.Minute, func() error {
			out, err := kexec("nslookup", fqdn)
			if !strings.Contains(out, "Address: "+want) {
				return fmt.Errorf("nslookup %s in peer-0: %v\n%s (want %s)", fqdn, err, out, want)
			}
			return nil
		})
	}
	// The API server's certificate covers its name in the domain: a TLS
	// connection to it by that name verifies with the cluster's CA.
	cfg := restConfig(t, kubeconfig)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAData) {
		t.Fatal("no CA in the tenant's kubeconfig")
	}
	host := strings.TrimPrefix(cfg.Host, "https://")
	conn, err := tls.Dial("tcp", host, &tls.Config{RootCAs: pool, ServerName: "kubernetes.default.svc." + domain})
	if err != nil {
		t.Errorf("TLS to the API server (%s) as kubernetes.default.svc.%s: %v", host, domain, err)
	} else {
		conn.Close()
	}
	t.Run("proxy kubelets", func(t *testing.T) { proxyKubelets(t, hostKubeconfig, kubeconfig, name, ns, "peer-0") })
}
