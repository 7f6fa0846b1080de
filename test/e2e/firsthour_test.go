package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mdns "github.com/miekg/dns"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// A vCluster user's first hour on the local host, in the order the README
// and docs/virtual-clusters.md give, with nothing pushed by hand:
//   - `dev up` pushes what `virtual create` needs (clustersync's image and
//     the rewrite-hosts image);
//   - `virtual create -f` of a vcluster.yaml written for vCluster 0.3x
//     (examples/vcluster: every sync key clustersync acts on, patches on
//     seven kinds) goes through the chart: the control plane becomes ready
//     on the real node and each patch is on the host as the file says; a
//     StatefulSet of 2 behind a headless Service runs (its image through
//     translateImage, /etc/hosts rewritten by the default busybox image)
//     and each pod resolves the other's stable name;
//   - the same file in the older spelling (translate) does the same, with
//     examples/vcluster/control-plane.yaml layered over it (a second -f):
//     its keys of controlPlane.statefulSet are on the host's StatefulSet
//     and in its running pod (an added init container ran, the sidecar
//     runs and sees the host aliases and DNS options, the DNS server
//     answers from the file's Corefile), a third -f's scheduling keys
//     (node selector, affinity, tolerations, spread, priority and runtime
//     class, pull policy, pod management) are on the StatefulSet and the
//     pod is admitted and scheduled under them, its ServiceMonitor is
//     made, a fourth -f's experimental.deploy (manifests, a template, a
//     chart pushed as an OCI artifact to the local registry) is applied
//     and the chart's pods run, and with --expose
//     its API server is reached, its certificate verified, at the node's
//     address and the file's node port, and covers a load balancer's
//     address as soon as the Service gets one; the kubeconfig Secrets of
//     exportKubeConfig carry the file's context, and a service account's
//     token in another namespace, renewed when the service account goes,
//     and removed by `virtual delete`;
//   - a control plane that cannot start fails in seconds, with its message
//     and the fix: an image missing from the local registry or a host
//     namespace the file names (before anything is installed), an image missing on a host not known to be
//     local (from the kubelet's pull error), an init container that fails.
func TestFirstHour(t *testing.T) {
	out := devUpReal(t)
	for _, want := range []string{"Pushed " + config.DefaultRewriteHostsImage, "Pushed ghcr.io/clustersync/clustersync:latest in "} {
		if !strings.Contains(out, want) {
			t.Errorf("dev up did not say %q:\n%s", want, out)
		}
	}
	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	installHostCRDs(t, hostKubeconfig)
	file, err := os.ReadFile("../../examples/vcluster/vcluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("patches", func(t *testing.T) {
		// The host's DNS (the real node's pods' resolver) knows a name of
		// the cluster domain that the virtual cluster lacks, which
		// fallbackHostCluster lets the tenant's pods resolve (peers).
		useTestResolver(t, hostOnlyName, hostOnlyIP)
		firstHourCluster(t, hostKubeconfig, "fh-a", string(file), nil, true)
	})
	older := strings.ReplaceAll(string(file), "patches:", "translate:")
	t.Run("translate, control plane pod", func(t *testing.T) {
		exportNamespace(t, clientFor(t, hostKubeconfig), "team-a-ci", "team-a-kubeconfig")
		firstHourCluster(t, hostKubeconfig, "fh-b", older, []string{"../../examples/vcluster/control-plane.yaml", schedulingFile(t, hostKubeconfig), appsFile(t)}, false)
	})
	t.Run("cluster domain", func(t *testing.T) { otherClusterDomain(t, hostKubeconfig) })
	t.Run("gateway API", func(t *testing.T) { gatewayAPI(t, hostKubeconfig) })
	t.Run("errors in seconds", func(t *testing.T) { startErrors(t, hostKubeconfig) })
}

// runPeers runs StatefulSet default/peer in the virtual cluster of
// virtual: 2 pods of image (a busybox, with labels and template
// annotations) that serve their /etc over HTTP on port 80 (busybox's
// httpd), behind the headless Service peers (which the caller makes), and
// returns each pod's IP once both run.
func runPeers(t *testing.T, virtual client.Client, labels map[string]string, image string, annotations map[string]string) map[string]string {
	t.Helper()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "peer", Namespace: "default"}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To[int32](2), ServiceName: "peers", Selector: &metav1.LabelSelector{MatchLabels: labels},
		PodManagementPolicy: appsv1.ParallelPodManagement,
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "main", Image: image, Command: []string{"busybox", "httpd", "-f", "-p", "80", "-h", "/etc"}}}}}}}
	testenv.Eventually(t, time.Minute, func() error { return ignoreExists(virtual.Create(ctx, sts)) })
	ips := map[string]string{}
	testenv.Eventually(t, 3*time.Minute, func() error {
		for _, n := range []string{"peer-0", "peer-1"} {
			var p corev1.Pod
			if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: n}, &p); err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				return fmt.Errorf("pod %s: %s", n, p.Status.Phase)
			}
			ips[n] = p.Status.PodIP
		}
		return nil
	})
	return ips
}

// hostOnlyName is a name of the cluster domain that only the host's DNS
// answers (with hostOnlyIP) in TestFirstHour: a host Service's, as a
// tenant pod reaches it with fallbackHostCluster.
const hostOnlyName, hostOnlyIP = "registry.platform.svc.cluster.local.", "10.0.0.77"

// installHostCRDs gives the host what examples/vcluster/vcluster.yaml
// expects of it: the CSI snapshot CRDs (volumeSnapshots) and a namespaced
// CRD widgets.example.com (customResources).
func installHostCRDs(t *testing.T, hostKubeconfig string) {
	t.Helper()
	widgets := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}}}}}}}}},
	}
	testenv.InstallCRDs(t, restConfig(t, hostKubeconfig), time.Minute, append(testenv.SnapshotCRDs(t), widgets)...)
}

// firstHourCluster creates virtual cluster name from the vcluster.yaml
// file (and the files of overlays over it, in order), checks each kind's
// patch on the host, with overlays its control plane pod, and, with
// statefulSet, runs the StatefulSet; then deletes it.
func firstHourCluster(t *testing.T, hostKubeconfig, name, file string, overlays []string, statefulSet bool) {
	ns := name + "-host"
	path := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	start := time.Now()
	args := []string{"virtual", "create", name, "-n", ns, "-f", path, "--kubeconfig-out", kubeconfig}
	if len(overlays) > 0 {
		for _, o := range overlays {
			args = append(args, "-f", o)
		}
		// --expose makes the overlay's NodePort Service a LoadBalancer.
		args = append(args, "--expose")
	}
	out := cli(t, args...)
	t.Logf("virtual create -f (%s): %.1f s\n%s", name, time.Since(start).Seconds(), out)
	t.Cleanup(func() {
		if out, err := cliErr("virtual", "delete", name, "-n", ns, "--delete-namespace"); err != nil {
			t.Errorf("virtual delete %s: %v\n%s", name, err, out)
		}
	})
	if strings.Contains(out, "Note:") {
		t.Errorf("create noted keys without effect; every key of the example takes effect:\n%s", out)
	}
	virtual := clientFor(t, kubeconfig)
	host := clientFor(t, hostKubeconfig)
	// The file's labels and annotations of the StatefulSet and its pod.
	var sts appsv1.StatefulSet
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Labels["example.com/team"] != "team-a" || sts.Spec.Template.Annotations["example.com/owner"] != "team-a" {
		t.Errorf("host StatefulSet labels %v, pod annotations %v: want the file's", sts.Labels, sts.Spec.Template.Annotations)
	}
	if len(overlays) > 0 {
		controlPlanePod(t, hostKubeconfig, host, &sts)
		scheduled(t, host, &sts)
		exposed(t, hostKubeconfig, kubeconfig, host, ns, name, out)
		exported(t, host, virtual, ns, name)
		appsDeployed(t, hostKubeconfig, kubeconfig, virtual, name, ns, out, start)
	}
	tr := translate.Translator{VCluster: name, HostNamespace: ns}
	hostName := func(n string) string { return tr.HostName(n, "default") }

	// One object of each patched kind.
	labels := map[string]string{"app": "peer"}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greet", Namespace: "default"}, Data: map[string]string{"greeting": "hello"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: "default",
			Annotations: map[string]string{"example.com/rotation": "a", translate.AnnotationForceSync: "true"}}, StringData: map[string]string{"t": "x"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "peers", Namespace: "default", Annotations: map[string]string{"example.com/owner": "ops"}},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", Labels: map[string]string{"example.com/tier": "gold"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}},
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default",
			Annotations: map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/x"}},
			Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "peers", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
	}
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	widget.SetName("w1")
	widget.SetNamespace("default")
	if err := unstructured.SetNestedField(widget.Object, "blue", "spec", "color"); err != nil {
		t.Fatal(err)
	}
	objs = append(objs, widget)
	for _, o := range objs {
		// The virtual cluster serves the widgets once the syncer copied the CRD.
		testenv.Eventually(t, time.Minute, func() error { return ignoreExists(virtual.Create(ctx, o)) })
	}

	// Each patch, on the host copy, as the file says.
	checks := []struct {
		what string
		obj  client.Object
		get  func(client.Object) string
		want string
	}{
		{"ConfigMap data.greeting", &corev1.ConfigMap{}, func(o client.Object) string { return o.(*corev1.ConfigMap).Data["greeting"] }, "HELLO"},
		{"Secret annotation example.com/rotation", &corev1.Secret{}, func(o client.Object) string { return o.GetAnnotations()["example.com/rotation"] }, "weekly-a"},
		{"Service annotation example.com/owner", &corev1.Service{}, func(o client.Object) string { return o.GetAnnotations()["example.com/owner"] }, "team-a:ops"},
		{"PersistentVolumeClaim label example.com/tier", &corev1.PersistentVolumeClaim{}, func(o client.Object) string { return o.GetLabels()["example.com/tier"] }, "tier-gold"},
		{"Ingress annotation rewrite-target", &networkingv1.Ingress{}, func(o client.Object) string {
			return o.GetAnnotations()["nginx.ingress.kubernetes.io/rewrite-target"]
		}, "/team-a/x"},
	}
	names := []string{"greet", "token", "peers", "data", "web"}
	for i, c := range checks {
		testenv.Eventually(t, time.Minute, func() error {
			if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostName(names[i])}, c.obj); err != nil {
				return err
			}
			if got := c.get(c.obj); got != c.want {
				return fmt.Errorf("host %s of %s: %q, want %q", c.what, names[i], got, c.want)
			}
			return nil
		})
	}
	testenv.Eventually(t, time.Minute, func() error {
		w := &unstructured.Unstructured{}
		w.SetAPIVersion("example.com/v1")
		w.SetKind("Widget")
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostName("w1")}, w); err != nil {
			return err
		}
		if got, _, _ := unstructured.NestedString(w.Object, "spec", "color"); got != "team-a-blue" {
			return fmt.Errorf("host Widget spec.color %q, want team-a-blue", got)
		}
		return nil
	})
	if statefulSet {
		peers(t, kubeconfig, virtual, host, tr, labels)
		fromHostObjects(t, kubeconfig, virtual, host, ns)
		replicated(t, kubeconfig, virtual, host, tr, path)
	}
}

// replicated adds networking.replicateServices to virtual cluster
// tr.VCluster with `virtual upgrade` (file, the cluster's vcluster.yaml,
// and an overlay): toHost publishes the tenant's headless Service peers as
// host Service team-a-peers, whose EndpointSlices hold the peer pods'
// addresses, and the tenant's Service peers-web as team-a-web, whose
// cluster IP leads to them; fromHost shows the cluster's own host Service to the tenant as
// platform/host-api, which peer-0 resolves to its cluster IP. An upgrade
// without the overlay takes both away.
func replicated(t *testing.T, kubeconfig string, virtual, host client.Client, tr translate.Translator, file string) {
	t.Helper()
	overlay := filepath.Join(t.TempDir(), "replicate.yaml")
	if err := os.WriteFile(overlay, []byte(fmt.Sprintf(`networking:
  replicateServices:
    toHost:
      - from: default/peers
        to: %[1]s/team-a-peers
      - from: default/peers-web
        to: %[1]s/team-a-web
    fromHost:
      - from: %[1]s/%[2]s
        to: platform/host-api
`, tr.HostNamespace, tr.VCluster)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Service with a cluster IP in front of the peers, for traffic.
	web := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "peers-web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "peer"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if err := virtual.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	cli(t, "virtual", "upgrade", tr.VCluster, "-n", tr.HostNamespace, "-f", file, "-f", overlay)
	var peerIPs []string
	for _, n := range []string{"peer-0", "peer-1"} {
		var p corev1.Pod
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: n}, &p); err != nil {
			t.Fatal(err)
		}
		peerIPs = append(peerIPs, p.Status.PodIP)
	}
	slices.Sort(peerIPs)
	testenv.Eventually(t, time.Minute, func() error {
		var list discoveryv1.EndpointSliceList
		if err := host.List(ctx, &list, client.InNamespace(tr.HostNamespace), client.MatchingLabels{discoveryv1.LabelServiceName: "team-a-peers"}); err != nil {
			return err
		}
		var got []string
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				got = append(got, e.Addresses...)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, peerIPs) {
			return fmt.Errorf("host Service team-a-peers leads to %v, want the peer pods' %v", got, peerIPs)
		}
		return nil
	})
	// Traffic: this machine (a node of the host, as a host pod would)
	// reaches the peer pods through the cluster IP of peers-web's replica.
	var replica corev1.Service
	testenv.Eventually(t, time.Minute, func() error {
		return host.Get(ctx, client.ObjectKey{Namespace: tr.HostNamespace, Name: "team-a-web"}, &replica)
	})
	testenv.Eventually(t, time.Minute, func() error {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://" + net.JoinHostPort(replica.Spec.ClusterIP, "80") + "/hostname")
		if err != nil {
			return fmt.Errorf("GET through host Service team-a-web (%s): %w", replica.Spec.ClusterIP, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "peer-") {
			return fmt.Errorf("GET through host Service team-a-web: %s %q, want a peer pod's /etc/hostname", resp.Status, body)
		}
		return nil
	})
	var api corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: tr.HostNamespace, Name: tr.VCluster}, &api); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func() error {
		out, _ := exec.Command("kubectl", "--kubeconfig", kubeconfig, "exec", "peer-0", "--", "nslookup", "host-api.platform.svc.cluster.local").CombinedOutput()
		if !strings.Contains(string(out), "Address: "+api.Spec.ClusterIP) {
			return fmt.Errorf("nslookup host-api.platform in peer-0: %s (want the host Service's %s)", out, api.Spec.ClusterIP)
		}
		return nil
	})

	cli(t, "virtual", "upgrade", tr.VCluster, "-n", tr.HostNamespace, "-f", file)
	testenv.Eventually(t, time.Minute, func() error {
		if err := host.Get(ctx, client.ObjectKey{Namespace: tr.HostNamespace, Name: "team-a-peers"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("host Service team-a-peers after its entry went: %v", err)
		}
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "platform", Name: "host-api"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the tenant's Service platform/host-api after its entry went: %v", err)
		}
		return nil
	})
}

// fromHostObjects checks vcluster.yaml's sync.fromHost keys as the tenant
// sees them with kubectl: the host ConfigMap platform-settings of the
// virtual cluster's host namespace ns is the tenant's
// default/platform-settings, follows 100 host changes (the latency of
// each is logged, p50 and p99), and a tenant's edit or delete of it is put
// back; of two host PriorityClasses only the one the selector picks is
// copied.
func fromHostObjects(t *testing.T, kubeconfig string, virtual, host client.Client, ns string) {
	t.Helper()
	suffix := strings.TrimSuffix(ns, "-host")
	gold := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: suffix + "-gold", Labels: map[string]string{"example.com/tier": "gold"}}, Value: 100}
	plain := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: suffix + "-plain"}, Value: 10}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "platform-settings", Namespace: ns}, Data: map[string]string{"level": "0"}}
	for _, o := range []client.Object{gold, plain, settings} {
		if err := host.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.Delete(ctx, o) })
	}
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	level := func(want string) {
		t.Helper()
		testenv.Eventually(t, time.Minute, func() error {
			out, err := kubectl("get", "configmap", "platform-settings", "-o", "jsonpath={.data.level}")
			if err != nil || out != want {
				return fmt.Errorf("kubectl get configmap platform-settings (as the tenant): %v: %q, want level %q", err, out, want)
			}
			return nil
		})
	}
	level("0")
	testenv.Eventually(t, time.Minute, func() error {
		return virtual.Get(ctx, client.ObjectKeyFromObject(gold), &schedulingv1.PriorityClass{})
	})
	if err := virtual.Get(ctx, client.ObjectKeyFromObject(plain), &schedulingv1.PriorityClass{}); !apierrors.IsNotFound(err) {
		t.Errorf("host PriorityClass %s, outside the selector, in the tenant: %v", plain.Name, err)
	}

	// 100 host changes, each waited for in the tenant through a watch
	// (polling would measure the client's rate limit), timed from the host
	// API server's answer to the tenant's event.
	cs := kubernetes.NewForConfigOrDie(restConfig(t, kubeconfig))
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=platform-settings"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var took []time.Duration
	for i := 1; i <= 100; i++ {
		want := strconv.Itoa(i)
		settings.Data["level"] = want
		if err := host.Update(ctx, settings); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		deadline := time.After(30 * time.Second)
	wait:
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("the watch of the tenant's platform-settings ended at change %d", i)
				}
				if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && cm.Data["level"] == want {
					break wait
				}
			case <-deadline:
				t.Fatalf("host change %d not in the tenant after 30 s", i)
			}
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("a host ConfigMap change in the tenant (sync.fromHost.configMaps), 100 changes: p50 %s, p99 %s, max %s",
		took[49].Round(time.Millisecond), took[98].Round(time.Millisecond), took[99].Round(time.Millisecond))

	// The tenant's edit and delete are put back.
	if out, err := kubectl("patch", "configmap", "platform-settings", "-p", `{"data":{"level":"tenant's"}}`); err != nil {
		t.Fatalf("kubectl patch (as the tenant): %v\n%s", err, out)
	}
	level("100")
	if out, err := kubectl("delete", "configmap", "platform-settings"); err != nil {
		t.Fatalf("kubectl delete (as the tenant): %v\n%s", err, out)
	}
	level("100")
}

// peers runs a StatefulSet of 2 behind the headless Service peers: the
// image is the file's translateImage source, so the host runs busybox; both
// pods run, their host copies carry the pod patch, the rewrite-hosts init
// container (the default image) and the enforced toleration; /etc/hosts
// names each pod by its virtual FQDN; and each pod resolves the other's
// stable name through the virtual cluster's DNS to its IP.
func peers(t *testing.T, kubeconfig string, virtual, host client.Client, tr translate.Translator, labels map[string]string) {
	t.Helper()
	ips := runPeers(t, virtual, labels, "example.com/team-a/tools:stable", map[string]string{"example.com/team": "x"})
	for _, n := range []string{"peer-0", "peer-1"} {
		var hp corev1.Pod
		if err := host.Get(ctx, client.ObjectKey{Namespace: tr.HostNamespace, Name: tr.HostName(n, "default")}, &hp); err != nil {
			t.Fatal(err)
		}
		if got := hp.Annotations["example.com/team"]; got != "team-a/x" {
			t.Errorf("host pod %s: annotation example.com/team %q, want the pod patch's team-a/x", n, got)
		}
		if len(hp.Spec.InitContainers) == 0 || hp.Spec.InitContainers[0].Name != pods.RewriteHostsContainer ||
			hp.Spec.InitContainers[0].Image != images.Reference(images.DefaultRegistry, images.BusyboxRepository, images.BusyboxTag) {
			t.Errorf("host pod %s: init containers %v, want %s with the busybox image first", n, hp.Spec.InitContainers, pods.RewriteHostsContainer)
		}
		if got := hp.Spec.Containers[0].Image; got != config.DefaultRewriteHostsImage {
			t.Errorf("host pod %s runs image %q, want translateImage's %s", n, got, config.DefaultRewriteHostsImage)
		}
		tolerated := false
		for _, tol := range hp.Spec.Tolerations {
			tolerated = tolerated || (tol.Key == "team" && tol.Value == "a" && tol.Effect == corev1.TaintEffectNoSchedule)
		}
		if !tolerated {
			t.Errorf("host pod %s: tolerations %v lack the enforced team=a:NoSchedule", n, hp.Spec.Tolerations)
		}
	}
	kexec := func(pod string, args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "exec", pod, "--"}, args...)...).Output()
		return string(out), err
	}
	for self, peer := range map[string]string{"peer-0": "peer-1", "peer-1": "peer-0"} {
		fqdn := peer + ".peers.default.svc.cluster.local"
		testenv.Eventually(t, time.Minute, func() error {
			out, err := kexec(self, "nslookup", fqdn)
			if err != nil || !strings.Contains(out, ips[peer]) {
				return fmt.Errorf("nslookup %s in %s: %v\n%s (want %s)", fqdn, self, err, out, ips[peer])
			}
			return nil
		})
		// networking.advanced.fallbackHostCluster: a name of the cluster
		// domain only the host's DNS knows.
		testenv.Eventually(t, time.Minute, func() error {
			// busybox's nslookup also asks for AAAA records, which the
			// host's DNS here has none of (NXDOMAIN, exit status 1).
			out, err := kexec(self, "nslookup", strings.TrimSuffix(hostOnlyName, "."))
			if !strings.Contains(out, "Address: "+hostOnlyIP) {
				return fmt.Errorf("nslookup %s in %s (the host's DNS, through fallbackHostCluster): %v\n%s (want %s)", hostOnlyName, self, err, out, hostOnlyIP)
			}
			return nil
		})
		hosts, err := kexec(self, "cat", "/etc/hosts")
		if err != nil || !strings.Contains(hosts, self+".peers.default.svc.cluster.local") {
			t.Errorf("/etc/hosts of %s (%v) does not name its virtual FQDN:\n%s", self, err, hosts)
		}
	}
}

// startErrors: a control plane that cannot start fails in seconds, saying
// why and what fixes it.
func startErrors(t *testing.T, hostKubeconfig string) {
	host := clientFor(t, hostKubeconfig)
	cleanup := func(name, ns string) {
		t.Cleanup(func() { _, _ = cliErr("virtual", "delete", name, "-n", ns, "--delete-namespace") })
	}

	// An image the local registry lacks: refused before anything is
	// installed.
	start := time.Now()
	out, err := cliErr("virtual", "create", "fh-c", "--set", "controlPlane.statefulSet.image.tag=nope", "--connect=false")
	took := time.Since(start)
	cleanup("fh-c", "vc-fh-c")
	if err == nil || !strings.Contains(out, "ghcr.io/clustersync/clustersync:nope is not in the local host's registry") || !strings.Contains(out, "make image") {
		t.Errorf("a missing image: err %v, output:\n%s", err, out)
	}
	if took > 20*time.Second {
		t.Errorf("a missing image took %s to report", took)
	}
	if list := cli(t, "virtual", "list"); strings.Contains(list, "fh-c") {
		t.Errorf("a refused virtual cluster was installed:\n%s", list)
	}

	// A host namespace the file names that the host lacks: refused before
	// anything is installed, with the command that makes it.
	start = time.Now()
	out, err = cliErr("virtual", "create", "fh-f", "--set", "networking.replicateServices.toHost[0].from=default/web",
		"--set", "networking.replicateServices.toHost[0].to=no-such-team/web", "--connect=false")
	cleanup("fh-f", "vc-fh-f")
	if err == nil || !strings.Contains(out, "networking.replicateServices.toHost[0].to: host namespace no-such-team does not exist; create it first (kubectl create namespace no-such-team)") {
		t.Errorf("a missing host namespace: err %v, output:\n%s", err, out)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("a missing host namespace took %s to report", took)
	}
	if err := host.Get(ctx, client.ObjectKey{Name: "vc-fh-f"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused virtual cluster's host namespace vc-fh-f was made: %v", err)
	}

	// The same image on a host that is not known to be the local one (its
	// API server named localhost): the kubelet's pull error stops the wait.
	raw, err := clientcmd.LoadFromFile(hostKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range raw.Clusters {
		c.Server = strings.Replace(c.Server, "127.0.0.1", "localhost", 1)
	}
	other := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, other); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	out, err = cliErr("virtual", "create", "fh-d", "--host-kubeconfig", other, "--set", "controlPlane.statefulSet.image.tag=nope", "--connect=false")
	took = time.Since(start)
	cleanup("fh-d", "vc-fh-d")
	t.Logf("a missing image, not checked beforehand (%.1f s):\n%s", took.Seconds(), out)
	if err == nil || !strings.Contains(out, "virtual cluster fh-d cannot start") || !strings.Contains(out, "(image ghcr.io/clustersync/clustersync:nope)") ||
		!strings.Contains(out, deploy.ReasonImageNotFound) || !strings.Contains(out, "fix: push ghcr.io/clustersync/clustersync:nope") {
		t.Errorf("a missing image: err %v, output:\n%s", err, out)
	}
	if took > 90*time.Second {
		t.Errorf("a missing image took %s to report, want seconds", took)
	}

	// An init container that fails the same way every time: a leftover
	// certificate Secret that holds no certificate.
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fh-e-host"}}); err != nil {
		t.Fatal(err)
	}
	cleanup("fh-e", "fh-e-host")
	t.Cleanup(func() { _ = host.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fh-e-host"}}) })
	if err := host.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fh-e-certs", Namespace: "fh-e-host"},
		Data: map[string][]byte{"ca.crt": []byte("not a certificate"), "ca.key": []byte("not a key")}}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	out, err = cliErr("virtual", "create", "fh-e", "-n", "fh-e-host", "--connect=false")
	took = time.Since(start)
	t.Logf("an init container that fails (%.1f s):\n%s", took.Seconds(), out)
	if err == nil || !strings.Contains(out, "init container init (image ghcr.io/clustersync/clustersync:latest) of pod fh-e-host/fh-e-0: failed twice with the same message") ||
		!strings.Contains(out, "host secret fh-e-host/fh-e-certs") || !strings.Contains(out, "kubectl -n fh-e-host logs fh-e-0 -c init --previous") {
		t.Errorf("a failing init container: err %v, output:\n%s", err, out)
	}
	if !strings.Contains(out, "pod fh-e-host/fh-e-0 ") {
		t.Errorf("no progress line while waiting:\n%s", out)
	}
	if took > 2*time.Minute {
		t.Errorf("a failing init container took %s to report, want seconds", took)
	}
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// controlPlanePod checks what examples/vcluster/control-plane.yaml sets on
// the host StatefulSet sts and the chart's other objects (the workloads'
// ServiceAccount, the PodDisruptionBudget, the Role), and in its running
// pod, its Corefile included.
func controlPlanePod(t *testing.T, hostKubeconfig string, host client.Client, sts *appsv1.StatefulSet) {
	t.Helper()
	spec := sts.Spec.Template.Spec
	if len(spec.HostAliases) != 1 || spec.DNSConfig == nil || len(spec.DNSConfig.Options) != 1 ||
		spec.SecurityContext == nil || ptr.Deref(spec.SecurityContext.FSGroup, 0) != 2000 || ptr.Deref(spec.SecurityContext.RunAsUser, 0) != 65532 {
		t.Errorf("pod spec: host aliases %v, DNS %+v, security %+v", spec.HostAliases, spec.DNSConfig, spec.SecurityContext)
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		switch c.Name {
		case "wait-for-api", "log-shipper":
			continue
		case "kube-apiserver":
			if c.StartupProbe == nil || c.StartupProbe.FailureThreshold != 300 {
				t.Errorf("kube-apiserver startup probe %+v, want failureThreshold 300", c.StartupProbe)
			}
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GODEBUG" }) ||
			!slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/podinfo" }) {
			t.Errorf("container %s: env %v, mounts %v: want GODEBUG and /etc/podinfo", c.Name, c.Env, c.VolumeMounts)
		}
	}
	// The advanced keys, coredns and rbac, on the host's objects.
	if sts.Annotations["example.com/cost-center"] != "team-a" {
		t.Errorf("StatefulSet annotations %v lack globalMetadata's", sts.Annotations)
	}
	for _, c := range spec.Containers {
		if q := c.Resources.Limits[corev1.ResourceMemory]; c.Name == "coredns" && q.String() != "256Mi" {
			t.Errorf("coredns memory limit %s, want the file's 256Mi", q.String())
		}
	}
	var sa corev1.ServiceAccount
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: "team-a-workloads"}, &sa); err != nil ||
		len(sa.ImagePullSecrets) != 1 || sa.ImagePullSecrets[0].Name != "team-a-registry" {
		t.Errorf("workload ServiceAccount team-a-workloads: %v, pull secrets %v", err, sa.ImagePullSecrets)
	}
	var pdb policyv1.PodDisruptionBudget
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name}, &pdb); err != nil ||
		pdb.Spec.MinAvailable == nil || pdb.Annotations["example.com/cost-center"] != "team-a" {
		t.Errorf("PodDisruptionBudget %s: %v, %+v", sts.Name, err, pdb)
	}
	var role rbacv1.Role
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: "vc-" + sts.Name}, &role); err != nil ||
		!slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "leases") }) {
		t.Errorf("Role vc-%s lacks the file's extra rule on leases (%v)", sts.Name, err)
	}
	var pod corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: deploy.PodName(sts.Name)}, &pod); err != nil {
		t.Fatal(err)
	}
	state := map[string]corev1.ContainerState{}
	for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		state[s.Name] = s.State
	}
	if s := state["wait-for-api"].Terminated; s == nil || s.ExitCode != 0 {
		t.Errorf("init container wait-for-api: %+v, want it to have ended with 0", state["wait-for-api"])
	}
	if state["log-shipper"].Running == nil {
		t.Errorf("sidecar log-shipper: %+v, want it running", state["log-shipper"])
	}
	// The API server runs with the file's extra flag (the real node's
	// processes are this machine's).
	ps, err := exec.Command("ps", "-ww", "-eo", "args").Output()
	if err != nil || !slices.ContainsFunc(strings.Split(string(ps), "\n"), func(l string) bool {
		return strings.Contains(l, "kube-apiserver") && strings.HasSuffix(strings.TrimSpace(l), "--event-ttl=2h")
	}) {
		t.Errorf("no kube-apiserver runs with the extra flag --event-ttl=2h last (%v)", err)
	}
	// The embedded etcd runs with the file's extra flag: its metrics (on the
	// health port the kubelet probes) report the 3 GiB quota.
	testenv.Eventually(t, time.Minute, func() error {
		body, err := httpGet(fmt.Sprintf("http://%s/metrics", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(controlplane.PodEtcdHealthPort))))
		if err != nil {
			return err
		}
		if !strings.Contains(body, "\netcd_server_quota_backend_bytes 3.221225472e+09\n") {
			return fmt.Errorf("etcd's metrics lack the quota of --quota-backend-bytes=3221225472")
		}
		return nil
	})
	// The file's Corefile answers at the pod's DNS port: the team's git
	// server from its hosts block, the virtual cluster's kubernetes
	// Service through the kubeconfig clustersync gave its kubernetes
	// plugin.
	dnsServer := net.JoinHostPort(pod.Status.PodIP, "1053")
	for name, want := range map[string]string{"git.team-a.internal.": "10.0.0.54", "kubernetes.default.svc.cluster.local.": ""} {
		testenv.Eventually(t, time.Minute, func() error {
			in, _, err := (&mdns.Client{Timeout: 5 * time.Second}).Exchange(new(mdns.Msg).SetQuestion(name, mdns.TypeA), dnsServer)
			if err != nil {
				return err
			}
			if a, ok := onlyA(in); !ok || (want != "" && a != want) {
				return fmt.Errorf("%s at %s: %s %v, want one A record %s", name, dnsServer, mdns.RcodeToString[in.Rcode], in.Answer, want)
			}
			return nil
		})
	}
	for file, want := range map[string]string{"/etc/hosts": "registry.team-a.internal", "/etc/resolv.conf": "ndots:2"} {
		out, err := exec.Command("kubectl", "--kubeconfig", hostKubeconfig, "exec", "-n", pod.Namespace, pod.Name, "-c", "log-shipper", "--", "cat", file).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s in the sidecar: %v\n%s\nwant %s", file, err, out, want)
		}
	}
}

// schedulingFile writes a third -f file for fh-b with the scheduling keys
// of controlPlane.statefulSet, values the local host's one node satisfies,
// and a ServiceMonitor; it creates the PriorityClass and RuntimeClass it
// names (deleted when the test ends) and the ServiceMonitor CRD, and
// returns the file's path.
func schedulingFile(t *testing.T, hostKubeconfig string) string {
	t.Helper()
	host := clientFor(t, hostKubeconfig)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "fh-control-planes"}, Value: 1000}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fh-runc"}, Handler: "runc"}
	for _, o := range []client.Object{pc, rc} {
		if err := ignoreExists(host.Create(ctx, o)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.Delete(ctx, o) })
	}
	testenv.InstallCRDs(t, restConfig(t, hostKubeconfig), time.Minute, testenv.ServiceMonitorCRD())
	path := filepath.Join(t.TempDir(), "scheduling.yaml")
	const file = `controlPlane:
  serviceMonitor:
    enabled: true
    labels: {release: prometheus}
  statefulSet:
    imagePullPolicy: IfNotPresent
    runtimeClassName: fh-runc
    scheduling:
      podManagementPolicy: OrderedReady
      priorityClassName: fh-control-planes
      nodeSelector:
        kubernetes.io/os: linux
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference:
                matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]
      tolerations:
        - {key: example.com/dedicated, operator: Equal, value: control-planes, effect: NoSchedule}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector: {matchLabels: {release: fh-b}}
`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scheduled checks schedulingFile's keys on the host StatefulSet sts and
// its running pod: the pod was admitted with the priority class's value
// and scheduled under the node selector, affinity, tolerations and spread.
func scheduled(t *testing.T, host client.Client, sts *appsv1.StatefulSet) {
	t.Helper()
	spec := sts.Spec.Template.Spec
	if sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement || spec.PriorityClassName != "fh-control-planes" ||
		ptr.Deref(spec.RuntimeClassName, "") != "fh-runc" || spec.NodeSelector["kubernetes.io/os"] != "linux" ||
		spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || len(spec.TopologySpreadConstraints) != 1 ||
		!slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool { return t.Key == "example.com/dedicated" }) {
		t.Errorf("host StatefulSet: podManagementPolicy %s, pod spec priority %q, runtime class %v, node selector %v, affinity %+v, spread %v, tolerations %v",
			sts.Spec.PodManagementPolicy, spec.PriorityClassName, spec.RuntimeClassName, spec.NodeSelector, spec.Affinity, spec.TopologySpreadConstraints, spec.Tolerations)
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if c.Name != "wait-for-api" && c.Name != "log-shipper" && c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %s pulls %s, want the file's IfNotPresent", c.Name, c.ImagePullPolicy)
		}
	}
	var pod corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: deploy.PodName(sts.Name)}, &pod); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(pod.Spec.Priority, 0) != 1000 || pod.Spec.NodeName == "" {
		t.Errorf("control plane pod: priority %v, node %q; want 1000 from fh-control-planes, and a node", pod.Spec.Priority, pod.Spec.NodeName)
	}
	sm := &unstructured.Unstructured{}
	sm.SetAPIVersion("monitoring.coreos.com/v1")
	sm.SetKind("ServiceMonitor")
	if err := host.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: "vc-" + sts.Name}, sm); err != nil || sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor vc-%s: %v, labels %v; want the file's release prometheus", sts.Name, err, sm.GetLabels())
	}
}

// onlyA returns the address of the one A record that answers in, false
// when in holds another answer or none.
func onlyA(in *mdns.Msg) (string, bool) {
	if len(in.Answer) != 1 {
		return "", false
	}
	a, ok := in.Answer[0].(*mdns.A)
	if !ok {
		return "", false
	}
	return a.A.String(), true
}

// exposed checks virtual cluster name of host namespace ns, created with
// --expose and the overlay's node port 31443: create said where it is
// exposed; kubectl reaches the API server at the host node's address and
// that port, verifying its certificate with the kubeconfig's CA; and once
// the Service gets a load balancer address (written here as a load
// balancer controller writes it), the API server serves a certificate
// that covers it, and the certs Secret keeps it.
func exposed(t *testing.T, hostKubeconfig, kubeconfig string, host client.Client, ns, name, createOut string) {
	t.Helper()
	var svc corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 31443 {
		t.Fatalf("host Service %s: type %s, ports %v; want --expose's LoadBalancer with the file's node port 31443", name, svc.Spec.Type, svc.Spec.Ports)
	}
	var nodes corev1.NodeList
	if err := host.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	var nodeIP string
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	server := "https://" + net.JoinHostPort(nodeIP, "31443")
	for _, want := range []string{"The API server is exposed at", server, "is a LoadBalancer without an address yet"} {
		if !strings.Contains(createOut, want) {
			t.Errorf("create did not say %q:\n%s", want, createOut)
		}
	}
	testenv.Eventually(t, time.Minute, func() error {
		out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--server", server, "get", "--raw", "/readyz").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			return fmt.Errorf("kubectl --server %s get --raw /readyz: %v\n%s", server, err, out)
		}
		return nil
	})

	const lbIP = "192.0.2.44"
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"loadBalancer":{"ingress":[{"ip":"`+lbIP+`"}]}}}`))
	if err := host.Status().Patch(ctx, &svc, patch); err != nil {
		t.Fatal(err)
	}
	covers := func(der []byte) bool {
		cert, err := x509.ParseCertificate(der)
		return err == nil && slices.ContainsFunc(cert.IPAddresses, net.ParseIP(lbIP).Equal)
	}
	testenv.Eventually(t, time.Minute, func() error {
		conn, err := tls.Dial("tcp", net.JoinHostPort(svc.Spec.ClusterIP, "443"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the certificate is what is checked
		if err != nil {
			return err
		}
		defer conn.Close()
		if !covers(conn.ConnectionState().PeerCertificates[0].Raw) {
			return fmt.Errorf("the API server's certificate lacks the load balancer's %s", lbIP)
		}
		return nil
	})
	var certs corev1.Secret
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-certs"}, &certs); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certs.Data["apiserver.crt"])
	if block == nil || !covers(block.Bytes) {
		t.Errorf("host secret %s-certs keeps a certificate without %s", name, lbIP)
	}
}

// exportNamespace creates host namespace ns for the exported kubeconfig
// Secret secret, and, once the test's virtual cluster is deleted (cleanups
// run last registered first), checks that the Secret went with it and
// deletes the namespace.
func exportNamespace(t *testing.T, host client.Client, ns, secret string) {
	t.Helper()
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("exported kubeconfig secret %s/%s after virtual delete: %v, want it gone", ns, secret, err)
		}
		_ = host.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
}

// exported checks the kubeconfig Secrets of virtual cluster name (host
// namespace ns) that vcluster.yaml and control-plane.yaml ask for: vc-NAME
// has the context team-a; team-a-ci/team-a-kubeconfig holds a token of
// service account default/ci, which may read (view) and not create, as
// kubectl shows through the Service's cluster IP; when the service account
// is deleted, the syncer makes it again and writes a token that works.
func exported(t *testing.T, host, virtual client.Client, ns, name string) {
	t.Helper()
	var vc corev1.Secret
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vc-" + name}, &vc); err != nil {
		t.Fatal(err)
	}
	if kc, err := clientcmd.Load(vc.Data["config"]); err != nil || kc.CurrentContext != "team-a" {
		t.Errorf("host secret vc-%s: context %v (%v), want the file's team-a", name, kc, err)
	}
	var svc corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
		t.Fatal(err)
	}
	server := "https://" + net.JoinHostPort(svc.Spec.ClusterIP, "443")
	kubectl := func(secret *corev1.Secret, args ...string) (string, error) {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, secret.Data["config"], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", path, "--server", server}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	const user = "system:serviceaccount:default:ci"
	works := func(old string) (*corev1.Secret, error) {
		var s corev1.Secret
		if err := host.Get(ctx, client.ObjectKey{Namespace: "team-a-ci", Name: "team-a-kubeconfig"}, &s); err != nil {
			return nil, err
		}
		if len(s.Data["token"]) == 0 || string(s.Data["token"]) == old {
			return nil, fmt.Errorf("host secret team-a-ci/team-a-kubeconfig: no new token")
		}
		if out, err := kubectl(&s, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); err != nil || out != user {
			return nil, fmt.Errorf("kubectl auth whoami with the exported kubeconfig: %v: %s, want %s", err, out, user)
		}
		return &s, nil
	}
	var secret *corev1.Secret
	testenv.Eventually(t, time.Minute, func() (err error) { secret, err = works(""); return err })
	if out, err := kubectl(secret, "get", "pods", "-A", "-o", "name"); err != nil {
		t.Errorf("the exported service account cannot read pods (ClusterRole view): %v\n%s", err, out)
	}
	if out, _ := kubectl(secret, "auth", "can-i", "create", "pods", "-n", "default"); out != "no" {
		t.Errorf("the exported service account may create pods (%s): want view only", out)
	}
	if err := virtual.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func() error { _, err := works(string(secret.Data["token"])); return err })
}
