package charts

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/lint"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// renderManager runs `helm template` of the embedded manager chart as
// release mgr in namespace ns1 with sets (helm --set syntax), and returns
// the manifests by kind/name.
func renderManager(t *testing.T, sets ...string) map[string]string {
	t.Helper()
	vals, err := (&values.Options{Values: sets}).MergeValues(getter.Providers{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Render(ManagerName, "mgr", "ns1", vals)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeStrict[T any](t *testing.T, manifests map[string]string, key string) *T {
	t.Helper()
	m, ok := manifests[key]
	if !ok {
		t.Fatalf("no %s in the rendered chart", key)
	}
	var v T
	if err := yaml.UnmarshalStrict([]byte(m), &v); err != nil {
		t.Fatalf("%s: %v\n%s", key, err, m)
	}
	return &v
}

func TestChartsLint(t *testing.T) {
	for _, name := range []string{ManagerName} { // virtual-cluster: internal/virtual/deploy, with its config values
		linter := lint.All(name, nil, "ns1", false)
		for _, msg := range linter.Messages {
			if msg.Severity > 1 { // warnings and errors; info is fine
				t.Errorf("helm lint %s: %s", name, msg)
			}
		}
	}
}

// The manager chart: two replicas of `clustersync manager` whose Lease is
// in the release namespace, ready only while listening for registered
// clusters (the leader), behind a Service on 443, bound to cluster-admin.
func TestManagerChart(t *testing.T) {
	m := renderManager(t)
	for _, key := range []string{"ServiceAccount/mgr", "ClusterRoleBinding/mgr-ns1", "Service/mgr", "Deployment/mgr"} {
		if _, ok := m[key]; !ok {
			t.Errorf("no %s", key)
		}
	}
	crb := decodeStrict[rbacv1.ClusterRoleBinding](t, m, "ClusterRoleBinding/mgr-ns1")
	if crb.RoleRef.Name != "cluster-admin" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "mgr" || crb.Subjects[0].Namespace != "ns1" {
		t.Errorf("binding %+v", crb)
	}
	d := decodeStrict[appsv1.Deployment](t, m, "Deployment/mgr")
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"manager", "--serve-addr=:8443", "--external-url=https://mgr.ns1.svc", "--leader-elect-namespace=ns1",
		"--agent-image=ghcr.io/clustersync/clustersync:latest", "--health-addr=:8081"} {
		if !slices.Contains(c.Command, want) {
			t.Errorf("command %v lacks %s", c.Command, want)
		}
	}
	if c.Image != "ghcr.io/clustersync/clustersync:latest" {
		t.Errorf("image %s", c.Image)
	}
	if p := c.ReadinessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port.String() != "https" {
		t.Errorf("readiness %+v, want a TCP check of the https port (only the leader listens)", p)
	}
	svc := decodeStrict[corev1.Service](t, m, "Service/mgr")
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service's selector %v does not select the pods (%v)", svc.Spec.Selector, d.Spec.Template.Labels)
		}
	}

	m = renderManager(t, "externalURL=https://mgr.example.com", "tls.secretName=mgr-tls", "image.tag=v1.2.3",
		"eks.endpoint=http://eks:4599", "replicas=3")
	d = decodeStrict[appsv1.Deployment](t, m, "Deployment/mgr")
	c = d.Spec.Template.Spec.Containers[0]
	cmd := strings.Join(c.Command, " ")
	for _, want := range []string{"--external-url=https://mgr.example.com", "--tls-cert=/etc/clustersync/tls/tls.crt",
		"--tls-key=/etc/clustersync/tls/tls.key", "--eks-endpoint=http://eks:4599", "--agent-image=ghcr.io/clustersync/clustersync:v1.2.3"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %s lacks %s", cmd, want)
		}
	}
	var tlsVolume bool
	for _, v := range d.Spec.Template.Spec.Volumes {
		tlsVolume = tlsVolume || (v.Secret != nil && v.Secret.SecretName == "mgr-tls")
	}
	if !tlsVolume || *d.Spec.Replicas != 3 {
		t.Errorf("volumes %+v, replicas %d", d.Spec.Template.Spec.Volumes, *d.Spec.Replicas)
	}
}

// The dashboard is on by default: every replica serves it on 8090, behind
// a Service that also sends to replicas that are not Ready; an Ingress
// when asked; off with dashboard.enabled=false. The AKS and GKE settings
// reach the command.
func TestManagerChartDashboard(t *testing.T) {
	m := renderManager(t)
	d := decodeStrict[appsv1.Deployment](t, m, "Deployment/mgr")
	cmd := strings.Join(d.Spec.Template.Spec.Containers[0].Command, " ")
	for _, want := range []string{"--dashboard-addr=:8090", "--aks-refresh=300", "--gke-poll=30"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %s lacks %s", cmd, want)
		}
	}
	svc := decodeStrict[corev1.Service](t, m, "Service/mgr-dashboard")
	if !svc.Spec.PublishNotReadyAddresses || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "dashboard" {
		t.Errorf("dashboard service %+v", svc.Spec)
	}
	if _, ok := m["Ingress/mgr-dashboard"]; ok {
		t.Error("an Ingress without dashboard.ingress.enabled")
	}
	m = renderManager(t, "dashboard.ingress.enabled=true", "dashboard.ingress.host=clusters.example.com", "dashboard.ingress.tlsSecretName=dash-tls",
		"dashboard.ingress.className=nginx", "gke.endpoint=http://gke:4601")
	ing := decodeStrict[networkingv1.Ingress](t, m, "Ingress/mgr-dashboard")
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" || len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "dash-tls" ||
		ing.Spec.Rules[0].Host != "clusters.example.com" || ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "mgr-dashboard" {
		t.Errorf("ingress %+v", ing.Spec)
	}
	if cmd := strings.Join(decodeStrict[appsv1.Deployment](t, m, "Deployment/mgr").Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--gke-endpoint=http://gke:4601") {
		t.Errorf("command %s lacks --gke-endpoint", cmd)
	}
	m = renderManager(t, "dashboard.enabled=false")
	if _, ok := m["Service/mgr-dashboard"]; ok {
		t.Error("a dashboard Service with dashboard.enabled=false")
	}
	if cmd := strings.Join(decodeStrict[appsv1.Deployment](t, m, "Deployment/mgr").Spec.Template.Spec.Containers[0].Command, " "); strings.Contains(cmd, "--dashboard-addr") {
		t.Errorf("command %s serves the dashboard with dashboard.enabled=false", cmd)
	}
}

// The manager chart's crds/ (which Helm installs before the release) are
// exactly the CRDs `make crds` generates into config/crd: the same files,
// byte for byte.
func TestManagerChartCRDsAreGenerated(t *testing.T) {
	c, err := Load(ManagerName)
	if err != nil {
		t.Fatal(err)
	}
	inChart := map[string]string{}
	for _, f := range c.CRDObjects() {
		inChart[path.Base(f.Filename)] = string(f.File.Data)
	}
	generated, err := filepath.Glob(filepath.Join("..", "config", "crd", "*.clustersync.io_*.yaml"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("no generated CRDs in config/crd (%v)", err)
	}
	for _, g := range generated {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(g)
		if got, ok := inChart[name]; !ok {
			t.Errorf("charts/manager/crds lacks %s: run make crds", name)
		} else if got != string(want) {
			t.Errorf("charts/manager/crds/%s differs from %s: run make crds", name, g)
		}
		delete(inChart, name)
	}
	for name := range inChart {
		t.Errorf("charts/manager/crds/%s is not generated from api/ (not in config/crd): run make crds", name)
	}
}
