package runner_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/testenv/ocitest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/apps"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// appChart is a chart whose one ConfigMap, RELEASE-app in the release's
// namespace, holds the release's name and its value "color".
func appChart(t *testing.T, name, version string) []byte {
	return testenv.Chart(t, name, version, map[string]string{"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-app
data:
  release: {{ .Release.Name }}
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
  color: {{ .Values.color | quote }}
`}, map[string]any{"color": "blue"})
}

// deployStatus is the recorded status of experimental.deploy.vcluster.
func deployStatus() (apps.Status, error) {
	var cm corev1.ConfigMap
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: apps.StatusNamespace, Name: apps.StatusConfigMap}, &cm); err != nil {
		return apps.Status{}, err
	}
	return apps.ParseStatus(cm.Annotations[apps.StatusAnnotation])
}

// experimental.deploy.vcluster: manifests (a namespaced object without a
// namespace lands in default; a cluster-scoped Namespace), a rendered
// manifestsTemplate, and charts from a bundle, an HTTP chart repository and
// an OCI registry, all applied by the syncer; a changed entry upgrades its
// release, a dropped one is uninstalled, a dropped manifest deleted; a
// chart that cannot be fetched is reported (Failed, ChartPullFailed, the
// error) and retried until it can.
func TestDeployApps(t *testing.T) {
	ns := env.NewNamespace(t)
	ociRepo := testenv.PushChart(t, ocitest.Registry(t), "charts", appChart(t, "oci-app", "0.2.0"))
	httpRepo := testenv.ServeChartRepo(t, appChart(t, "web", "0.1.0"))
	bundle := base64.StdEncoding.EncodeToString(appChart(t, "bundled", "1.0.0"))

	cfg := config.Default()
	d := &cfg.Experimental.Deploy.VCluster
	d.Manifests = fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s-m
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-in-default
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dropped
  namespace: %[1]s-m
`, ns)
	d.ManifestsTemplate = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: templated
  namespace: %s
data:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
  domain: {{ .Values.networking.advanced.clusterDomain }}
`, ns)
	d.Helm = []config.DeployHelm{
		{Bundle: bundle, Chart: config.DeployHelmChart{Name: "bundled"}, Release: config.DeployHelmRelease{Namespace: ns}, Values: "color: red"},
		{Chart: config.DeployHelmChart{Name: "web", Repo: httpRepo, Version: "0.1.0"}, Release: config.DeployHelmRelease{Name: "web-" + ns, Namespace: ns + "-web"}},
		{Chart: config.DeployHelmChart{Name: "oci-app", Repo: ociRepo, Insecure: true}, Release: config.DeployHelmRelease{Namespace: ns}},
	}
	withConfig(t, cfg)
	t.Cleanup(func() {
		for _, n := range []string{ns + "-m", ns + "-web"} {
			_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		_ = env.VirtualClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ns + "-in-default", Namespace: "default"}})
		_ = env.VirtualClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: apps.StatusConfigMap, Namespace: apps.StatusNamespace}})
	})

	succeeded := func() apps.Status {
		t.Helper()
		var st apps.Status
		testenv.Eventually(t, 90*time.Second, func() error {
			var err error
			if st, err = deployStatus(); err != nil {
				return err
			}
			if st.Phase != apps.PhaseSuccess {
				return fmt.Errorf("status %s", st.Summary())
			}
			return nil
		})
		return st
	}
	data := func(name, namespace string) (map[string]string, error) {
		var cm corev1.ConfigMap
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cm)
		return cm.Data, err
	}
	wantData := func(name, namespace, key, want string) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, func() error {
			got, err := data(name, namespace)
			if err != nil {
				return err
			}
			if got[key] != want {
				return fmt.Errorf("%s/%s %s = %q, want %q", namespace, name, key, got[key], want)
			}
			return nil
		})
	}
	gone := func(name, namespace string) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, func() error {
			if _, err := data(name, namespace); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap %s/%s still there (%v)", namespace, name, err)
			}
			return nil
		})
	}

	st := succeeded()
	if len(st.Charts) != 3 {
		t.Fatalf("status charts = %+v, want 3", st.Charts)
	}
	wantData(ns+"-in-default", "default", "a", "1")
	wantData("dropped", ns+"-m", "", "")
	wantData("templated", ns, "name", env.Name)
	wantData("templated", ns, "namespace", env.HostNamespace)
	wantData("templated", ns, "domain", "cluster.local")
	wantData("bundled-app", ns, "color", "red")
	wantData("web-"+ns+"-app", ns+"-web", "chart", "web-0.1.0")
	wantData("oci-app-app", ns, "chart", "oci-app-0.2.0")
	wantData("oci-app-app", ns, "color", "blue")

	// Change: the bundle's values, the HTTP chart's repository fails,
	// the OCI chart and a manifest dropped.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadRepo := "http://" + closed.Addr().String()
	closed.Close()
	cfg2 := config.Default()
	d2 := &cfg2.Experimental.Deploy.VCluster
	d2.Manifests = strings.SplitN(d.Manifests, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dropped", 2)[0]
	d2.ManifestsTemplate = d.ManifestsTemplate
	d2.Helm = []config.DeployHelm{d.Helm[0], d.Helm[1]}
	d2.Helm[0].Values = "color: green"
	d2.Helm[1].Chart.Repo = deadRepo
	withConfig(t, cfg2)
	testenv.Eventually(t, 60*time.Second, func() error {
		st, err := deployStatus()
		if err != nil {
			return err
		}
		if st.Phase != apps.PhaseFailed || st.Reason != apps.ReasonChartPull || !strings.Contains(st.Message, closed.Addr().String()) {
			return fmt.Errorf("status %s, want Failed: ChartPullFailed naming %s", st.Summary(), deadRepo)
		}
		return nil
	})
	wantData("bundled-app", ns, "color", "green")
	gone("dropped", ns+"-m")

	// The repository comes back where the entry points: the retry
	// succeeds, and the OCI release is uninstalled.
	ln, err := net.Listen("tcp", closed.Addr().String())
	if err != nil {
		t.Skipf("the repository's port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: proxyTo(httpRepo), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	st = succeeded()
	if len(st.Charts) != 2 {
		t.Errorf("status charts = %+v, want 2 (oci-app uninstalled)", st.Charts)
	}
	gone("oci-app-app", ns)
	wantData("web-"+ns+"-app", ns+"-web", "chart", "web-0.1.0")

	// Nothing left to deploy: everything goes.
	withConfig(t, config.Default())
	gone("templated", ns)
	gone(ns+"-in-default", "default")
	gone("bundled-app", ns)
	gone("web-"+ns+"-app", ns+"-web")
}

// proxyTo serves every request from the server at base (an HTTP chart
// repository), as if it were there.
func proxyTo(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(base + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
}
