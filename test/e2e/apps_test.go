package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/apps"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
)

// appsFile pushes chart "web" (a Deployment of the demo web server) as an
// OCI artifact to the local registry of `dev up`, as a platform team
// pushes its add-ons, and writes a vcluster.yaml overlay whose
// experimental.deploy.vcluster installs it (from the address the real
// node's pods pull from) into namespace apps, with manifests and a
// manifestsTemplate that make the namespace and a ConfigMap naming the
// virtual cluster; and switches the metrics API off
// (integrations.metricsServer.enabled: false).
func appsFile(t *testing.T) string {
	t.Helper()
	st, ok := registry.Running(filepath.Join(tests.Dir, "host", "registry"))
	if !ok || st.PodAddr == "" {
		t.Fatalf("the local registry does not serve the real node's pods (status %+v): dev up runs it with --pod-addr", st)
	}
	chart := testenv.Chart(t, "web", "1.0.0", map[string]string{"deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
        ports: [{containerPort: 8080}]
`}, map[string]any{"replicas": 1, "image": images.Reference(images.DefaultRegistry, images.DemoRepository, "latest")})
	repo := testenv.PushChart(t, st.Addr, "charts", chart)
	repo = strings.Replace(repo, st.Addr, st.PodAddr, 1)
	path := filepath.Join(t.TempDir(), "apps.yaml")
	file := fmt.Sprintf(`integrations:
  metricsServer:
    enabled: false
experimental:
  deploy:
    vcluster:
      manifests: |-
        apiVersion: v1
        kind: Namespace
        metadata:
          name: apps
      manifestsTemplate: |-
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: cluster-info
          namespace: apps
        data:
          name: "{{ .Release.Name }}"
          hostNamespace: "{{ .Release.Namespace }}"
      helm:
        - chart:
            name: web
            repo: %s
            version: 1.0.0
            insecure: true
          release:
            name: web
            namespace: apps
          values: |-
            replicas: 2
`, repo)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// appsDeployed checks appsFile's apps in virtual cluster name (host
// namespace ns), created at created: create said they were applied, the
// tenant sees the manifests' objects and the chart's Deployment with the
// file's values, whose pods run on the real node, and `virtual status`
// shows the release; kubectl top says the metrics API is off. It logs the time from `virtual create` to the chart's
// pods Running.
func appsDeployed(t *testing.T, hostKubeconfig, kubeconfig string, virtual client.Client, name, ns, createOut string, created time.Time) {
	t.Helper()
	if !strings.Contains(createOut, "Apps of experimental.deploy.vcluster applied") {
		t.Errorf("create did not say the apps were applied:\n%s", createOut)
	}
	var cm corev1.ConfigMap
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "cluster-info"}, &cm); err != nil {
		t.Fatalf("the manifests' ConfigMap: %v", err)
	}
	if cm.Data["name"] != name || cm.Data["hostNamespace"] != ns {
		t.Errorf("cluster-info %v, want name %s and hostNamespace %s", cm.Data, name, ns)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		var d appsv1.Deployment
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, &d); err != nil {
			return err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			return fmt.Errorf("Deployment apps/web replicas %v, want the file's 2", d.Spec.Replicas)
		}
		if d.Status.AvailableReplicas != 2 {
			return fmt.Errorf("Deployment apps/web: %d of 2 available", d.Status.AvailableReplicas)
		}
		return nil
	})
	// When the pods started running (the containers' startedAt, whole
	// seconds), not when this test, which checked other things first,
	// looked.
	var pods corev1.PodList
	if err := virtual.List(ctx, &pods, client.InNamespace("apps"), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	var running time.Time
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if r := c.State.Running; r != nil && r.StartedAt.After(running) {
				running = r.StartedAt.Time
			}
		}
	}
	t.Logf("virtual create → the experimental.deploy chart's 2 pods Running: %.0f s (±1 s)", running.Sub(created).Seconds())
	// The tenant's view, with kubectl: Helm's release Secret.
	if out := kubectl(t, kubeconfig, "get", "secrets", "-n", "apps", "-l", "owner=helm,name=web", "-o", "name"); !strings.Contains(out, "sh.helm.release.v1.web.v1") {
		t.Errorf("kubectl get secrets -n apps -l owner=helm: %q, want the release's", out)
	}
	st, ok, err := deploy.AppsStatus(ctx, kubernetes.NewForConfigOrDie(restConfig(t, hostKubeconfig)), name, ns)
	if err != nil || !ok || st.Phase != apps.PhaseSuccess {
		t.Errorf("host pod's apps status: %+v (recorded %v, %v)", st, ok, err)
	}
	// Progress as events of the control plane's host pod.
	if out := kubectl(t, hostKubeconfig, "get", "events", "-n", ns, "--field-selector", "involvedObject.name="+deploy.PodName(name)+",reason="+apps.EventApplied,
		"-o", "custom-columns=MSG:.message", "--no-headers"); !strings.Contains(out, "chart web-1.0.0: release apps/web deployed in") {
		t.Errorf("host pod events %s: %q, want the chart's", apps.EventApplied, out)
	}
	// The metrics API is off: kubectl top says so, naming the key.
	if out, err := kubectlErr(kubeconfig, "top", "pod", "-n", "apps"); err == nil || !strings.Contains(out, "integrations.metricsServer.enabled is false") {
		t.Errorf("kubectl top pod with integrations.metricsServer.enabled false: %v\n%s", err, out)
	}
	out := cli(t, "virtual", "status", name, "--host-namespace", ns, "-n", "apps")
	for _, want := range []string{"Apps (experimental.deploy.vcluster): Success", "release apps/web: Success", "cluster-info"} {
		if !strings.Contains(out, want) {
			t.Errorf("virtual status does not show %q:\n%s", want, out)
		}
	}
}
