package e2e

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// proxyKubelets creates virtual cluster fh-k with
// networking.advanced.proxyKubelets byHostname and byIP on the real node
// and reads its fake node's kubelet as a tenant's Prometheus does (from
// the machine, which reaches the host's Service addresses as the tenant's
// pods do): with a tenant service account's token allowed nodes/metrics
// and nodes/stats, at the node's InternalIP (its host Service) and at its
// host name (the tenant's DNS answers the control plane Service). The
// answers hold the tenant's pod under its virtual name and nothing of the
// host namespace's other pods (the control plane pod); no token is 401, a
// token without the rights 403, exec 403.
func proxyKubelets(t *testing.T, hostKubeconfig string) {
	const name, ns = "fh-k", "fh-k-host"
	path := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(path, []byte("networking:\n  advanced:\n    proxyKubelets:\n      byHostname: true\n      byIP: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	out := cli(t, "virtual", "create", name, "-n", ns, "-f", path, "--kubeconfig-out", kubeconfig)
	t.Cleanup(func() {
		if out, err := cliErr("virtual", "delete", name, "-n", ns, "--delete-namespace"); err != nil {
			t.Errorf("virtual delete %s: %v\n%s", name, err, out)
		}
	})
	t.Logf("virtual create (proxyKubelets):\n%s", lastLine(out))
	virtual, host := clientFor(t, kubeconfig), clientFor(t, hostKubeconfig)
	virtualCS := hostClientset(t, kubeconfig)

	labels := map[string]string{"app": "sleeper"}
	if err := virtual.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default", Labels: labels}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers:                    []corev1.Container{{Name: "main", Image: config.DefaultRewriteHostsImage, Command: []string{"sleep", "3600"}}}}}); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	testenv.Eventually(t, 90*time.Second, func() error {
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sleeper"}, &pod); err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("sleeper is %s", pod.Status.Phase)
		}
		return nil
	})
	nodeName := pod.Spec.NodeName

	// The fake node's addresses: its host Service's cluster IP, its host name.
	var svc corev1.Service
	var internalIP, hostname string
	testenv.Eventually(t, time.Minute, func() error {
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: translate.Translator{VCluster: name}.NodeServiceName(nodeName)}, &svc); err != nil {
			return err
		}
		var node corev1.Node
		if err := virtual.Get(ctx, client.ObjectKey{Name: nodeName}, &node); err != nil {
			return err
		}
		internalIP, hostname = "", ""
		for _, a := range node.Status.Addresses {
			switch a.Type {
			case corev1.NodeInternalIP:
				internalIP = a.Address
			case corev1.NodeHostName:
				hostname = a.Address
			}
		}
		if internalIP != svc.Spec.ClusterIP || hostname != translate.NodeHostname(nodeName) {
			return fmt.Errorf("node %s: InternalIP %s, Hostname %s; want %s (host Service %s) and %s", nodeName, internalIP, hostname,
				svc.Spec.ClusterIP, svc.Name, translate.NodeHostname(nodeName))
		}
		return nil
	})
	var cp corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cp); err != nil {
		t.Fatal(err)
	}

	// The tenant's scraper: a service account allowed what Prometheus'
	// kubelet jobs ask for, and one allowed nothing.
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: "default"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody", Namespace: "default"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""},
			Resources: []string{"nodes/metrics", "nodes/stats", "nodes/proxy"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-reader"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubelet-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: "default"}}},
	} {
		if err := virtual.Create(ctx, o); ignoreExists(err) != nil {
			t.Fatal(err)
		}
	}
	token := func(sa string) string {
		tr, err := virtualCS.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	prom, nobody := token("prometheus"), token("nobody")
	// Prometheus' kubelet jobs skip the kubelet certificate check
	// (insecure_skip_verify), the usual setting for kubelets.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
	get := func(addr, hostHeader, path, bearer string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
		if err != nil {
			return 0, "", err
		}
		if hostHeader != "" {
			req.Host = hostHeader
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}

	byIP := internalIP + ":10250"
	byName := cp.Spec.ClusterIP + ":10250"
	testenv.Eventually(t, 90*time.Second, func() error {
		code, body, err := get(byIP, "", "/metrics/cadvisor", prom)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("GET https://%s/metrics/cadvisor: %d %v\n%.500s", byIP, code, err, body)
		}
		if !strings.Contains(body, `namespace="default",pod="sleeper"`) {
			return fmt.Errorf("no cadvisor sample of default/sleeper in:\n%.2000s", body)
		}
		if strings.Contains(body, ns) || strings.Contains(body, `pod="`+name+`-0"`) {
			return fmt.Errorf("the host namespace %s or the control plane pod shows in the tenant's metrics", ns)
		}
		return nil
	})
	// only_cpu_and_memory: the local real node's kubelet cannot stat its
	// root filesystem (its device is not in the machine's /dev), so its
	// full summary is an error of its own.
	code, body, err := get(byName, translate.NodeHostname(nodeName)+":10250", "/stats/summary?only_cpu_and_memory=true", prom)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /stats/summary at %s: %d %v\n%.500s", translate.NodeHostname(nodeName), code, err, body)
	}
	var summary statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(body), &summary); err != nil {
		t.Fatal(err)
	}
	var pods []string
	for _, p := range summary.Pods {
		pods = append(pods, p.PodRef.Namespace+"/"+p.PodRef.Name)
	}
	if strings.Join(pods, ",") != "default/sleeper" || summary.Node.NodeName != nodeName {
		t.Errorf("stats summary of node %s: pods %v; want only default/sleeper", summary.Node.NodeName, pods)
	}
	for _, c := range []struct {
		path, bearer string
		want         int
	}{
		{"/metrics/cadvisor", "", http.StatusUnauthorized},
		{"/metrics/cadvisor", nobody, http.StatusForbidden},
		{"/exec/default/sleeper/main?command=id", prom, http.StatusForbidden},
	} {
		if code, body, err := get(byIP, "", c.path, c.bearer); err != nil || code != c.want {
			t.Errorf("GET %s (token %v): %d %v, want %d\n%.300s", c.path, c.bearer != "", code, err, c.want, body)
		}
	}

	// The tenant's pods resolve the node's host name to the control plane
	// Service.
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "exec", "sleeper", "--", "nslookup", translate.NodeHostname(nodeName))
		if !strings.Contains(out, "Address: "+cp.Spec.ClusterIP) {
			return fmt.Errorf("nslookup %s in the tenant: %v\n%s (want %s)", translate.NodeHostname(nodeName), err, out, cp.Spec.ClusterIP)
		}
		return nil
	})
}
