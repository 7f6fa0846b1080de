package kubeletproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/mtls"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The proxy, in front of a real API server standing for the host: it
// forwards a request for a pod of its own virtual cluster to the host API
// (whose own answer, a Status object, comes back: the pod's node does not
// exist), and refuses, without asking the host for more than the pod, a pod
// of another virtual cluster, a host pod that claims another virtual name, a client that is
// not the virtual API server, and a client without a certificate.
func TestServesOnlyItsOwnPods(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), Name: "host", ServiceCIDR: "10.96.0.0/16", Binaries: binaries.Require(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Stop()
	hostKube := kubernetes.NewForConfigOrDie(host.Config)
	tr := translate.Translator{VCluster: "a", HostNamespace: "vc-shared"}
	if _, err := hostKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tr.HostNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostPod := func(virtualName, vcluster, claimedName string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tr.HostName(virtualName, "team"), Namespace: tr.HostNamespace,
			Labels:      map[string]string{translate.LabelManagedBy: vcluster},
			Annotations: map[string]string{translate.AnnotationObjectName: claimedName, translate.AnnotationObjectNamespace: "team"}},
			Spec: corev1.PodSpec{NodeName: "gone-node", Containers: []corev1.Container{{Name: "app", Image: "demo"}}}}
		if _, err := hostKube.CoreV1().Pods(tr.HostNamespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hostPod("mine", "a", "mine")
	hostPod("theirs", "b", "theirs")      // another virtual cluster's copy in the same namespace
	hostPod("spoofed", "a", "other-name") // labelled as ours, but the copy of another virtual pod

	p, err := New(tr, host.Config, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca, err := pki.NewCA("virtual-ca")
	if err != nil {
		t.Fatal(err)
	}
	files := mtls.Files{CertFile: filepath.Join(dir, "kubelet.crt"), KeyFile: filepath.Join(dir, "kubelet.key"), ClientCAFile: filepath.Join(dir, "ca.crt")}
	issue(t, ca, pki.Request{CommonName: "kubelet", Server: true, IPs: []net.IP{net.ParseIP("127.0.0.1")}}, files.CertFile, files.KeyFile)
	if err := os.WriteFile(files.ClientCAFile, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports.ForTest(t, 1)[0])
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mtls.Serve(serveCtx, "kubelet proxy", addr, files, p) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the proxy does not listen on %s: %v", addr, err)
	}

	apiserver := clientWith(t, ca, controlplane.KubeletClientCommonName)
	tenantAdmin := clientWith(t, ca, "clustersync-admin")
	tests := []struct {
		name     string
		client   *http.Client
		path     string
		status   int // 0: any
		bodyWant string
	}{
		{"own pod: the host API answers", apiserver, "/containerLogs/team/mine/app", http.StatusNotFound, `"kind":"Status","apiVersion":"v1"`},
		{"another virtual cluster's pod", apiserver, "/containerLogs/team/theirs/app", http.StatusNotFound, "pod team/theirs not found"},
		{"a host pod claiming another virtual name", apiserver, "/exec/team/spoofed/app?command=id&output=1", http.StatusNotFound, "pod team/spoofed not found"},
		{"a pod that does not exist", apiserver, "/portForward/team/nothing", http.StatusNotFound, "pod team/nothing not found"},
		{"a kubelet API not served", apiserver, "/pods", http.StatusNotFound, "only containerLogs"},
		{"the tenant's own admin certificate", tenantAdmin, "/containerLogs/team/mine/app", http.StatusForbidden, "not the virtual API server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.client.Get("https://" + addr + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if (tt.status != 0 && resp.StatusCode != tt.status) || !strings.Contains(string(body), tt.bodyWant) {
				t.Errorf("GET %s: %d %s; want %d and %q", tt.path, resp.StatusCode, body, tt.status, tt.bodyWant)
			}
		})
	}
	// An upgrade request (kubectl exec, attach, port-forward) goes to the
	// host API over HTTP/1.1, and the host's refusal comes back as it is.
	t.Run("exec upgrade reaches the host API", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, "https://"+addr+"/exec/team/mine/app?command=id&output=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "SPDY/3.1")
		req.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io")
		resp, err := apiserver.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusBadGateway || !strings.Contains(string(body), `"kind":"Status"`) {
			t.Errorf("exec upgrade: %d %s; want the host API's Status", resp.StatusCode, body)
		}
	})
	t.Run("no client certificate", func(t *testing.T) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca.CertPEM())
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		resp, err := c.Get("https://" + addr + "/containerLogs/team/mine/app")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("a client without a certificate got %d", resp.StatusCode)
		}
	})
}

func issue(t *testing.T, ca *pki.CA, r pki.Request, certFile, keyFile string) {
	t.Helper()
	c, k, err := ca.Issue(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteFiles(map[string][]byte{certFile: c, keyFile: k}); err != nil {
		t.Fatal(err)
	}
}

// clientWith is an HTTPS client trusting ca, with a client certificate of
// common name cn issued by ca.
func clientWith(t *testing.T, ca *pki.CA, cn string) *http.Client {
	t.Helper()
	c, k, err := ca.Issue(pki.Request{CommonName: cn, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
}
