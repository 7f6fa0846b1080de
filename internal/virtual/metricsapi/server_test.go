package metricsapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The API in front of a real API server standing for the virtual cluster
// and for a host without a metrics API: it serves only the front proxy,
// lets the virtual cluster's RBAC decide for the user (and groups) the
// front proxy names, answers discovery, refuses writes and watches, lists
// nothing without asking the host when the tenant has no pods, and says
// the host's metrics API is missing, without host names, when it is.
// Register points the aggregation layer at the pod's latest IP and lets
// view read metrics.
func TestServesTheFrontProxyWithTheCallersRights(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), Name: "v", ServiceCIDR: "10.96.0.0/16", Binaries: binaries.Require(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := translate.Translator{VCluster: "v", HostNamespace: "vc-v"}
	api, err := New(config.Default().Integrations.MetricsServer, tr, c, cp.Config, cp.Config, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "top", Namespace: "team"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{Group}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "top", Namespace: "team"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "top"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	do := func(cn, method, path string, header map[string][]string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		if cn != "" {
			req.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: cn}}}}}
		}
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	const proxy = controlplane.FrontProxyClientCommonName
	dev := map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Group": {"devs", "system:authenticated"}}
	stranger := map[string][]string{"X-Remote-User": {"bob"}, "X-Remote-Group": {"system:authenticated"}}
	const teamPods = "/apis/metrics.k8s.io/v1beta1/namespaces/team/pods"

	if code, body := do("", http.MethodGet, teamPods, dev); code != http.StatusForbidden {
		t.Errorf("without a client certificate: %d %s, want 403", code, body)
	}
	if code, body := do(controlplane.KubeletClientCommonName, http.MethodGet, teamPods, dev); code != http.StatusForbidden {
		t.Errorf("the kubelet client certificate: %d %s, want 403", code, body)
	}
	code, body := do(proxy, http.MethodGet, "/apis/metrics.k8s.io/v1beta1", nil)
	var resources metav1.APIResourceList
	if code != http.StatusOK || json.Unmarshal([]byte(body), &resources) != nil || len(resources.APIResources) != 2 {
		t.Errorf("discovery: %d %s", code, body)
	}
	if code, body := do(proxy, http.MethodGet, teamPods, stranger); code != http.StatusForbidden ||
		!strings.Contains(body, `User \"bob\" cannot list resource \"pods\" in API group \"metrics.k8s.io\" in the namespace \"team\"`) {
		t.Errorf("bob, without rights: %d %s, want 403 naming user, verb, resource and namespace", code, body)
	}
	if code, body := do(proxy, http.MethodGet, "/apis/metrics.k8s.io/v1beta1/namespaces/other/pods", dev); code != http.StatusForbidden {
		t.Errorf("alice in a namespace her group has no rights in: %d %s, want 403", code, body)
	}
	if code, body := do(proxy, http.MethodGet, teamPods, map[string][]string{"X-Remote-Group": {"devs"}}); code != http.StatusUnauthorized {
		t.Errorf("no user: %d %s, want 401", code, body)
	}
	if code, body := do(proxy, http.MethodDelete, teamPods+"/web-0", dev); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d %s, want 405", code, body)
	}
	if code, body := do(proxy, http.MethodGet, teamPods+"?watch=true", dev); code != http.StatusMethodNotAllowed {
		t.Errorf("watch: %d %s, want 405", code, body)
	}
	if code, body := do(proxy, http.MethodGet, teamPods+"?labelSelector=a%3D%3D%3Db", dev); code != http.StatusBadRequest {
		t.Errorf("a bad label selector: %d %s, want 400", code, body)
	}
	code, body = do(proxy, http.MethodGet, teamPods, dev)
	var list metricsv1beta1.PodMetricsList
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || list.Kind != "PodMetricsList" || len(list.Items) != 0 {
		t.Errorf("alice, through group devs, in a namespace without pods: %d %s, want 200 and an empty PodMetricsList", code, body)
	}
	if code, body := do(proxy, http.MethodGet, teamPods+"/web-0", dev); code != http.StatusNotFound {
		t.Errorf("a pod that does not exist: %d %s, want 404", code, body)
	}
	// Switched off by integrations.metricsServer: refused naming the key
	// (kubectl top prints the message), discovery still answered.
	for _, tt := range []struct {
		serve config.MetricsServer
		path  string
		key   string
	}{
		{config.MetricsServer{Enabled: false, Nodes: true, Pods: true}, teamPods, "integrations.metricsServer.enabled"},
		{config.MetricsServer{Enabled: true, Nodes: true, Pods: false}, teamPods, "integrations.metricsServer.pods"},
		{config.MetricsServer{Enabled: true, Nodes: false, Pods: true}, "/apis/metrics.k8s.io/v1beta1/nodes", "integrations.metricsServer.nodes"},
	} {
		off := *api
		off.serve = tt.serve
		req := httptest.NewRequest(http.MethodGet, tt.path, nil)
		req.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: proxy}}}}}
		req.Header["X-Remote-User"] = dev["X-Remote-User"]
		rec := httptest.NewRecorder()
		off.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "the metrics API of this virtual cluster is off: "+tt.key+" is false") {
			t.Errorf("%+v %s: %d %s, want 403 naming %s", tt.serve, tt.path, rec.Code, rec.Body.String(), tt.key)
		}
	}
	if api.off("pods") != "" || api.off("nodes") != "" {
		t.Errorf("the default configuration switches %q%q off", api.off("pods"), api.off("nodes"))
	}

	// The API server admits a pod once its namespace's default service
	// account exists (kube-controller-manager makes it).
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "default"}, &corev1.ServiceAccount{}) == nil, nil
	}); err != nil {
		t.Fatalf("service account team/default: %v", err)
	}
	if err := c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "team"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "demo"}}}}); err != nil {
		t.Fatal(err)
	}
	// Registered (twice: a restarted control plane pod has a new IP), the
	// Endpoints name the last IP, the APIService leads to the Service, and
	// view (aggregating the reader ClusterRole) lets carol read metrics.
	for _, ip := range []string{"10.0.0.5", "10.0.0.6"} {
		if err := Register(ctx, c, ip, 9444, []byte("ca")); err != nil {
			t.Fatal(err)
		}
	}
	var eps corev1.Endpoints
	if err := c.Get(ctx, client.ObjectKey{Namespace: ServiceNamespace, Name: ServiceName}, &eps); err != nil {
		t.Fatal(err)
	}
	if len(eps.Subsets) != 1 || len(eps.Subsets[0].Addresses) != 1 || eps.Subsets[0].Addresses[0].IP != "10.0.0.6" || eps.Subsets[0].Ports[0].Port != 9444 {
		t.Errorf("Endpoints %s/%s: %+v, want 10.0.0.6:9444 only", ServiceNamespace, ServiceName, eps.Subsets)
	}
	apiService := &unstructured.Unstructured{}
	apiService.SetAPIVersion("apiregistration.k8s.io/v1")
	apiService.SetKind("APIService")
	if err := c.Get(ctx, client.ObjectKey{Name: APIServiceName}, apiService); err != nil {
		t.Fatal(err)
	}
	if svc, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name"); svc != ServiceName {
		t.Errorf("APIService %s leads to Service %q, want %s", APIServiceName, svc, ServiceName)
	}
	if err := c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-view", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}}}); err != nil {
		t.Fatal(err)
	}
	carol := map[string][]string{"X-Remote-User": {"carol"}, "X-Remote-Group": {"system:authenticated"}}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, _ := do(proxy, http.MethodGet, teamPods, carol)
		return code != http.StatusForbidden, nil
	}); err != nil {
		code, body := do(proxy, http.MethodGet, teamPods, carol)
		t.Errorf("carol, with view in team: %d %s; want past the access check (view aggregates %s)", code, body, ReaderClusterRole)
	}

	code, body = do(proxy, http.MethodGet, teamPods, dev)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "metrics API is not available") || strings.Contains(body, tr.HostNamespace) {
		t.Errorf("the host has no metrics API: %d %s, want 503 saying so, without host names", code, body)
	}
}
