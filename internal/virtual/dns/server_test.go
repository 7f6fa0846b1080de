package dns_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/dns"
)

// CoreDNS, run by Run on the Corefile of Corefile, answers from a real API
// server: a Service's cluster IP, a headless Service's endpoints and
// hostname records, pod records; it answers NXDOMAIN for a missing Service
// of the cluster domain without asking the upstream, and forwards every
// other name to the upstream.
func TestServesTheVirtualClusterAndForwards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), Name: "dns", ServiceCIDR: "10.96.0.0/16", Binaries: binaries.Require(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	k := kubernetes.NewForConfigOrDie(cp.Config)
	const ns = "shop"
	mustCreate(t, func() error {
		_, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	var web *corev1.Service
	mustCreate(t, func() (err error) {
		web, err = k.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := k.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 5432}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := k.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.244.0.7"}, Hostname: ptr.To("db-0"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
				{Addresses: []string{"10.244.0.8"}, Hostname: ptr.To("db-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			},
			Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](5432), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}, metav1.CreateOptions{})
		return err
	})

	var kube *corev1.Service
	mustCreate(t, func() (err error) {
		kube, err = k.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
		return err
	})
	upstream, asked := startUpstream(t, "ext.clustersync.test.", "192.0.2.1")
	ports := freePorts(t, 4)
	corefile, err := dns.Corefile(dns.Options{Kubeconfig: cp.Layout.AdminKubeconfig(), Upstream: []string{upstream},
		Port: ports[0], HealthPort: ports[1], ReadyPort: ports[2], MetricsPort: ports[3], NodeHostnames: true})
	if err != nil {
		t.Fatal(err)
	}
	server, stop := serve(ctx, t, corefile, ports[0], ports[2])
	defer stop()
	tests := []struct {
		name  string
		rcode int
		want  []string
	}{
		{"web.shop.svc.cluster.local.", mdns.RcodeSuccess, []string{web.Spec.ClusterIP}},
		{"db.shop.svc.cluster.local.", mdns.RcodeSuccess, []string{"10.244.0.7", "10.244.0.8"}},
		{"db-1.db.shop.svc.cluster.local.", mdns.RcodeSuccess, []string{"10.244.0.8"}},
		{"10-244-0-9.shop.pod.cluster.local.", mdns.RcodeSuccess, []string{"10.244.0.9"}},
		{"missing.shop.svc.cluster.local.", mdns.RcodeNameError, nil},
		{"ext.clustersync.test.", mdns.RcodeSuccess, []string{"192.0.2.1"}},
		// proxyKubelets.byHostname: a fake node's kubelet host name is the
		// kubernetes Service's address.
		{"worker-1.nodes.vcluster.com.", mdns.RcodeSuccess, []string{kube.Spec.ClusterIP}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcode, got := lookupA(t, server, tt.name)
			slices.Sort(got)
			if rcode != tt.rcode || !slices.Equal(got, tt.want) {
				t.Errorf("%s: rcode %s, A %v; want %s, %v", tt.name, mdns.RcodeToString[rcode], got, mdns.RcodeToString[tt.rcode], tt.want)
			}
		})
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the upstream was asked %d times for A records, want once (only for the name outside the cluster domain)", n)
	}

	// Answers for the cluster domain are not cached: a Service created
	// after a name was asked for (NXDOMAIN) answers within seconds, not
	// after the TTL (30 s).
	mustCreate(t, func() error {
		_, err := k.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "missing"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		return err
	})
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		rcode, got := lookupA(t, server, "missing.shop.svc.cluster.local.")
		return rcode == mdns.RcodeSuccess && len(got) == 1, nil
	}); err != nil {
		t.Errorf("a Service created after its name was asked for does not answer within 10 s: %v", err)
	}
	stop()

	// A Corefile of the user's (controlPlane.coredns.overwriteConfig),
	// written as for vCluster's CoreDNS pod: UserCorefile gives its
	// kubernetes plugin the kubeconfig, and its hosts and rewrite plugins
	// answer too.
	ports = freePorts(t, 2)
	user := fmt.Sprintf(`.:%d {
    errors
    health
    ready :%d
    rewrite name regex .*\.nodes\.vcluster\.com kubernetes.default.svc.cluster.local
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    hosts {
        192.0.2.7 registry.internal
        fallthrough
    }
    forward . %s
    reload
}
`, ports[0], ports[1], upstream)
	corefile, err = dns.UserCorefile(user, dns.Options{Kubeconfig: cp.Layout.AdminKubeconfig(), Port: ports[0], ReadyPort: ports[1], HealthPort: freePorts(t, 1)[0]})
	if err != nil {
		t.Fatal(err)
	}
	server, stop = serve(ctx, t, corefile, ports[0], ports[1])
	defer stop()
	kubernetesIP := ""
	if svc, err := k.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else {
		kubernetesIP = svc.Spec.ClusterIP
	}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"web.shop.svc.cluster.local.", []string{web.Spec.ClusterIP}},
		{"node-1.nodes.vcluster.com.", []string{kubernetesIP}},
		{"registry.internal.", []string{"192.0.2.7"}},
		{"ext.clustersync.test.", []string{"192.0.2.1"}},
	} {
		if rcode, got := lookupA(t, server, tt.name); rcode != mdns.RcodeSuccess || !slices.Equal(got, tt.want) {
			t.Errorf("user's Corefile: %s: rcode %s, A %v; want %v", tt.name, mdns.RcodeToString[rcode], got, tt.want)
		}
	}
}

// serve runs CoreDNS on corefile until the returned stop is called (once
// or more; the test fails if Run returns an error), and returns its DNS
// address, 127.0.0.1:port, once it is ready (/ready on readyPort) and
// answers.
func serve(ctx context.Context, t *testing.T, corefile string, port, readyPort int) (string, func()) {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- dns.Run(runCtx, corefile) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	ready := fmt.Sprintf("http://127.0.0.1:%d/ready", readyPort)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return proc.HTTPOK(ctx, nil, ready) == nil, nil
	}); err != nil {
		stop()
		t.Fatalf("CoreDNS not ready at %s: %v", ready, err)
	}
	server := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// /ready answers before the DNS sockets are bound (CoreDNS runs its
	// plugins' start hooks first): wait for an answer.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := (&mdns.Client{Timeout: time.Second}).Exchange(new(mdns.Msg).SetQuestion("kubernetes.default.svc.cluster.local.", mdns.TypeA), server)
		return err == nil, nil
	}); err != nil {
		stop()
		t.Fatalf("CoreDNS does not answer on %s: %v", server, err)
	}
	return server, stop
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

// checkAnswerName is the query whose answers lookupA checks are for the
// name asked (the rewrite of Corefile's NodeHostnames answers so; a
// user's Corefile may not).
const checkAnswerName = "worker-1.nodes.vcluster.com."

// lookupA asks server for name's A records over UDP.
func lookupA(t *testing.T, server, name string) (int, []string) {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(name, mdns.TypeA)
	c := &mdns.Client{Timeout: 5 * time.Second}
	in, _, err := c.Exchange(m, server)
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	var ips []string
	for _, rr := range in.Answer {
		if a, ok := rr.(*mdns.A); ok {
			if name == checkAnswerName && !strings.EqualFold(a.Hdr.Name, name) {
				t.Errorf("query %s: answer for %s (a resolver drops it)", name, a.Hdr.Name)
			}
			ips = append(ips, a.A.String())
		}
	}
	return in.Rcode, ips
}

// startUpstream serves name → ip over UDP on a loopback port
// (testenv.ServeDNS) and returns its address and its count of A queries.
func startUpstream(t *testing.T, name, ip string) (string, *atomic.Int32) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return pc.LocalAddr().String(), testenv.ServeDNS(t, pc, name, ip)
}

// freePorts returns n ports leased to t (ports.ForTest).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	return ports.ForTest(t, n)
}
