package e2e

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// proxyKubelets reads, for virtual cluster name (host namespace ns,
// tenant kubeconfig kubeconfig, created with
// networking.advanced.proxyKubelets byHostname and byIP on the real node),
// the kubelet of tenant pod default/pod's fake node as a tenant's
// Prometheus does (from the machine, which reaches the host's Service
// addresses as the tenant's pods do): with a tenant service account's
// token allowed nodes/metrics and nodes/stats, at the node's InternalIP
// (its host Service) and at its host name (the tenant's DNS answers the
// control plane Service). The answers hold the tenant's pod under its
// virtual name and nothing of the host namespace's other pods (the control
// plane pod); no token is 401, a token without the rights 403, exec 403.
func proxyKubelets(t *testing.T, hostKubeconfig, kubeconfig, name, ns, podName string) {
	virtual, host := clientFor(t, kubeconfig), clientFor(t, hostKubeconfig)
	virtualCS := hostClientset(t, kubeconfig)
	var pod corev1.Pod
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: podName}, &pod); err != nil {
		t.Fatal(err)
	}
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
		if !strings.Contains(body, `namespace="default",pod="`+podName+`"`) {
			return fmt.Errorf("no cadvisor sample of default/%s in:\n%.2000s", podName, body)
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
	for _, p := range pods {
		if !strings.HasPrefix(p, "default/peer-") {
			t.Errorf("stats summary of node %s: pod %s is not the tenant's", summary.Node.NodeName, p)
		}
	}
	if !slices.Contains(pods, "default/"+podName) || summary.Node.NodeName != nodeName {
		t.Errorf("stats summary of node %s: pods %v; want default/%s among them", summary.Node.NodeName, pods, podName)
	}
	for _, c := range []struct {
		path, bearer string
		want         int
	}{
		{"/metrics/cadvisor", "", http.StatusUnauthorized},
		{"/metrics/cadvisor", nobody, http.StatusForbidden},
		{"/exec/default/" + podName + "/main?command=id", prom, http.StatusForbidden},
	} {
		if code, body, err := get(byIP, "", c.path, c.bearer); err != nil || code != c.want {
			t.Errorf("GET %s (token %v): %d %v, want %d\n%.300s", c.path, c.bearer != "", code, err, c.want, body)
		}
	}

	// The tenant's pods resolve the node's host name to the control plane
	// Service.
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "exec", podName, "--", "nslookup", translate.NodeHostname(nodeName))
		if !strings.Contains(out, "Address: "+cp.Spec.ClusterIP) {
			return fmt.Errorf("nslookup %s in the tenant: %v\n%s (want %s)", translate.NodeHostname(nodeName), err, out, cp.Spec.ClusterIP)
		}
		return nil
	})
}
