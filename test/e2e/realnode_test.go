package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/translate"
	"github.com/clustersync/clustersync/test/internal/harness"
)

// A virtual cluster on the local host's real node, as a user drives it:
// `dev up` starts the node and pushes clustersync's images to the local
// registry; `virtual create` installs the chart, whose control plane
// pod runs on the node; the demo image runs as a Deployment of the virtual
// cluster whose pods really start and pass their readiness probe; a
// NodePort Service made with kubectl, which the default quota refuses on
// the host, gets a SyncError event saying so; pods of
// the virtual cluster resolve its Services through its DNS (full and short
// names, a headless Service's pods) and other names through the node's
// resolver, reach the web pods by name, are refused at a port the Service
// does not have, and call their own API server as their service account; kubectl logs, exec, port-forward and top work
// through the virtual cluster, and no tenant pod can connect to the kubelet
// proxy;
// a pod deleted on the host comes back and runs again; virtual upgrade
// switches Ingress sync on;
// pause and resume keep every object (etcd's data is on a claim of the
// real node's default StorageClass);
// `virtual delete` leaves no container and no object of the tenant; `dev
// down` leaves no process, bridge, iptables chain or mount behind.
func TestRealNodeWorkload(t *testing.T) {
	out := devUpReal(t)
	m := regexp.MustCompile(`Registry: +http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("dev up does not print the registry:\n%s", out)
	}
	if st := cli(t, "dev", "status"); !strings.Contains(st, "Real node:   "+hostcluster.RealNodeName) {
		t.Errorf("dev status does not show the real node:\n%s", st)
	}
	// No `dev image`: dev up pushed clustersync's images (tag latest) built
	// from this source tree.

	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	host := clientFor(t, hostKubeconfig)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// The node's resolver, which the virtual cluster's DNS forwards to: a
	// test server that knows one name. Set before the control plane pod
	// starts (its resolv.conf is made then).
	const extName, extIP = "ext.clustersync.test.", "192.0.2.10"
	useTestResolver(t, extName, extIP)
	start := time.Now()
	out = cli(t, "virtual", "create", "rn", "--kubeconfig-out", kubeconfig)
	t.Logf("virtual create: %.1f s\n%s", time.Since(start).Seconds(), out)
	if !strings.Contains(out, "Switched to context vcluster_rn_vc-rn_") {
		t.Errorf("create did not connect:\n%s", out)
	}
	virtual := clientFor(t, kubeconfig)
	// connect through a port-forward (a local port forces one), running a
	// command against the virtual cluster.
	fwdPort := ports.ForTest(t, 1)[0]
	if ns := cli(t, "virtual", "connect", "rn", "--local-port", strconv.Itoa(fwdPort), "--", "kubectl", "get", "ns"); !strings.Contains(ns, "kube-system") ||
		!strings.Contains(ns, "default") || strings.Contains(ns, "vc-rn") {
		t.Errorf("virtual connect rn --local-port %d -- kubectl get ns: want the virtual cluster's namespaces:\n%s", fwdPort, ns)
	}
	serviceAccountConnect(t, virtual)
	if list := cli(t, "virtual", "list", "-o", "json"); !strings.Contains(list, `"name": "rn"`) || !strings.Contains(list, `"status": "Running"`) {
		t.Errorf("virtual list -o json:\n%s", list)
	}
	const hostNS = "vc-rn"
	tr := translate.Translator{VCluster: "rn", HostNamespace: hostNS}

	image := images.Reference(images.DefaultRegistry, images.DemoRepository, "latest")
	labels := map[string]string{"app": "web"}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-content", Namespace: "default"}, Data: map[string]string{"index.html": "hello from the real node"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "web", Image: image, Args: []string{"serve", "--addr", ":8080", "--content", "/content"},
					Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
					VolumeMounts:   []corev1.VolumeMount{{Name: "content", MountPath: "/content"}}}},
				Volumes: []corev1.Volume{{Name: "content", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "web-content"}}}}},
			}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{
			Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
	}
	for _, o := range objs {
		if err := virtual.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitReadyOnRealNode(t, host, hostNS, 2)

	// The default quota allows no node ports: a NodePort Service made with
	// kubectl is not copied to the host, and the tenant reads why in an
	// event that names no host object.
	if out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "create", "service", "nodeport", "web-np", "--tcp=80:8080").CombinedOutput(); err != nil {
		t.Fatalf("kubectl create service nodeport: %v\n%s", err, out)
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "get", "events", "-n", "default",
			"--field-selector", "involvedObject.name=web-np,reason=SyncError", "-o", "jsonpath={.items[*].message}").CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl get events: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "the host namespace's quota does not allow it") || !strings.Contains(string(out), "services.nodeports") {
			return fmt.Errorf("SyncError events of web-np: %q, want the quota's refusal", out)
		}
		if strings.Contains(string(out), hostNS) {
			return fmt.Errorf("the event names the host namespace: %q", out)
		}
		return nil
	})

	// The Service's cluster IP (the virtual Service carries the host's) from
	// a pod of the virtual cluster.
	var ip string
	testenv.Eventually(t, 60*time.Second, func() error {
		var vs, hs corev1.Service
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &vs); err != nil {
			return err
		}
		if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: tr.HostName("web", "default")}, &hs); err != nil {
			return err
		}
		if vs.Spec.ClusterIP != hs.Spec.ClusterIP {
			return fmt.Errorf("virtual Service IP %s, host %s", vs.Spec.ClusterIP, hs.Spec.ClusterIP)
		}
		ip = vs.Spec.ClusterIP
		return nil
	})
	virtualCS := hostClientset(t, kubeconfig)
	run := func(name string, args ...string) string {
		return podOutput(t, virtual, virtualCS, name, image, args...)
	}

	// Names resolve through the virtual cluster's DNS (CoreDNS in the control
	// plane pod): a Service's full name and its short name (search path) to
	// the virtual Service IP, a headless Service to its pods' IPs.
	if got := strings.TrimSpace(run("lookup", "lookup", "web.default.svc.cluster.local")); got != ip {
		t.Errorf("web.default.svc.cluster.local resolved to %q in a pod, want the Service IP %s", got, ip)
	}
	if got := strings.TrimSpace(run("lookup-short", "lookup", "web")); got != ip {
		t.Errorf("web resolved to %q in a pod of namespace default, want %s", got, ip)
	}
	if err := virtual.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-pods", Namespace: "default"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Selector: labels, Ports: []corev1.ServicePort{{Port: 8080}}}}); err != nil {
		t.Fatal(err)
	}
	var webPods corev1.PodList
	if err := virtual.List(ctx, &webPods, client.InNamespace("default"), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	var podIPs []string
	for _, p := range webPods.Items {
		podIPs = append(podIPs, p.Status.PodIP)
	}
	slices.Sort(podIPs)
	if got := strings.Fields(run("lookup-headless", "lookup", "web-pods.default.svc.cluster.local")); !slices.Equal(got, podIPs) {
		t.Errorf("headless Service web-pods resolved to %v, want the pods' IPs %v", got, podIPs)
	}

	// Names outside the cluster go to the node's resolver.
	if got := strings.TrimSpace(run("lookup-external", "lookup", extName)); got != extIP {
		t.Errorf("%s resolved to %q in a pod, want %s (from the node's resolver, through the virtual DNS)", extName, got, extIP)
	}

	// HTTP by name, from a pod of the virtual cluster.
	if logs := run("client", "get", "http://web.default.svc.cluster.local/"); !strings.Contains(logs, "hello from the real node") || !strings.Contains(logs, "Served by pod web-") {
		t.Errorf("GET http://web.default.svc.cluster.local/ from a pod returned:\n%s", logs)
	}

	// A port no Service has, at a Service's address, is refused (the
	// node's realnode.ServiceRejectChain), as on any cluster: the packet
	// does not leave the machine.
	if logs := podFailure(t, virtual, virtualCS, "no-port", image, "get", "http://"+ip+":9/"); !strings.Contains(logs, "connection refused") {
		t.Errorf("GET http://%s:9/ (a port the Service does not have) from a pod: want connection refused, got:\n%s", ip, logs)
	}

	// A pod calls its API server as its service account: the virtual
	// cluster's pods, with virtual names.
	if err := virtual.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "default-view", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "default"}}}); err != nil {
		t.Fatal(err)
	}
	logs := run("api", "get", "--service-account", "https://kubernetes.default.svc/api/v1/namespaces/default/pods")
	if !strings.Contains(logs, `"kind":"PodList"`) || !strings.Contains(logs, `"name":"web-`) || strings.Contains(logs, "-x-default-x-rn") {
		t.Errorf("the pod's own API server, as its service account, listed:\n%.2000s", logs)
	}

	// kubectl exec and port-forward through the virtual cluster reach the
	// web pods on the host (the syncer's kubelet proxy); logs did above.
	webPod := webPods.Items[0].Name
	// stdout only: kubectl may log a harmless "Unknown stream id 1,
	// discarding message" on stderr when a websocket exec ends.
	var execErr strings.Builder
	execCmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "exec", webPod, "--", "/demo-app", "lookup", "kubernetes.default")
	execCmd.Stderr = &execErr
	execOut, err := execCmd.Output()
	var apiSvc corev1.Service
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &apiSvc); err != nil {
		t.Fatal(err)
	}
	if err != nil || strings.TrimSpace(string(execOut)) != apiSvc.Spec.ClusterIP {
		t.Errorf("kubectl exec %s -- /demo-app lookup kubernetes.default through the virtual cluster: %v\n%s\n%s\nwant %s", webPod, err, execOut, execErr.String(), apiSvc.Spec.ClusterIP)
	}
	local := kubectlPortForward(t, kubeconfig, webPod, 8080)
	if page, err := httpGet("http://" + local + "/"); err != nil || !strings.Contains(page, "Served by pod "+webPod) {
		t.Errorf("kubectl port-forward %s through the virtual cluster, GET /: %v\n%s", webPod, err, page)
	}

	// kubectl top through the virtual cluster: the host's metrics-server
	// scrapes the web pods; the syncer's metrics API shows their figures
	// under the virtual names, and the fake node's.
	var webNames []string
	for _, p := range webPods.Items {
		webNames = append(webNames, p.Name)
	}
	slices.Sort(webNames)
	topStart := time.Now()
	testenv.Eventually(t, 2*time.Minute, func() error {
		out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "top", "pod", "-n", "default", "-l", "app=web", "--no-headers").CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl top pod: %v\n%s", err, out)
		}
		var names []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) == 3 && strings.HasSuffix(f[1], "m") && strings.HasSuffix(f[2], "Mi") {
				names = append(names, f[0])
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, webNames) {
			return fmt.Errorf("kubectl top pod -l app=web through the virtual cluster lists %v, want the web pods %v:\n%s", names, webNames, out)
		}
		return nil
	})
	t.Logf("kubectl top pod through the virtual cluster: listed both web pods after %.1f s of waiting", time.Since(topStart).Seconds())
	if out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "top", "node", "--no-headers").CombinedOutput(); err != nil ||
		!strings.HasPrefix(strings.TrimSpace(string(out)), hostcluster.RealNodeName+" ") {
		t.Errorf("kubectl top node through the virtual cluster: %v\n%s", err, out)
	}

	// The kubelet proxy listens in the control plane pod only: a tenant's
	// pod cannot even connect to it (it would need the API server's
	// certificate besides).
	var cp corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: "rn-0"}, &cp); err != nil {
		t.Fatal(err)
	}
	proxyURL := "https://" + net.JoinHostPort(cp.Status.PodIP, "10250") + "/containerLogs/default/" + webPod + "/web"
	if logs := podFailure(t, virtual, virtualCS, "kubelet-probe", image, "get", proxyURL); !strings.Contains(logs, "connection refused") {
		t.Errorf("a tenant pod's GET %s should be refused; it said:\n%s", proxyURL, logs)
	}

	// A tenant's privileged pod mounting the node's / stays Pending in the
	// virtual cluster (baseline Pod Security Standard, the default): no
	// host pod, no container on the real node.
	containersBefore := containersOf(t, hostNS)
	escape := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "escape", Namespace: "default"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "root", Image: image, Args: []string{"serve", "--addr", ":8081"},
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
			VolumeMounts:    []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}}},
		Volumes: []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}}
	if err := virtual.Create(ctx, escape); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func() error {
		var p corev1.Pod
		if err := virtual.Get(ctx, client.ObjectKeyFromObject(escape), &p); err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == "PodSecurity" && strings.Contains(c.Message, `violates PodSecurity "baseline:latest"`) &&
				p.Status.Phase == corev1.PodPending {
				return nil
			}
		}
		return fmt.Errorf("privileged hostPath pod: phase %s conditions %+v, want Pending with a PodSecurity condition", p.Status.Phase, p.Status.Conditions)
	})
	if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: tr.HostName("escape", "default")}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("host pod of the privileged pod: %v, want none", err)
	}
	if n := containersOf(t, hostNS); n > containersBefore {
		t.Errorf("containers of %s on the real node: %d, were %d", hostNS, n, containersBefore)
	}
	if err := virtual.Delete(ctx, escape); err != nil {
		t.Fatal(err)
	}

	// A web pod deleted on the host comes back and runs again.
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(hostNS), client.MatchingLabels{translate.LabelManagedBy: "rn"}); err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "web-") {
			victim = p.Name
		}
	}
	if victim == "" {
		t.Fatalf("no host copy of a web pod in %s", hostNS)
	}
	if err := host.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: hostNS}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, func() error {
		if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: victim}, &corev1.Pod{}); err == nil {
			return fmt.Errorf("host pod %s still there", victim)
		}
		return nil
	})
	waitReadyOnRealNode(t, host, hostNS, 2)

	// virtual upgrade: a new configuration (Ingresses synced) replaces the
	// control plane pod, nothing of the tenant is lost, and an Ingress
	// made then reaches the host with its backend renamed.
	upStart := time.Now()
	up := cli(t, "virtual", "upgrade", "rn", "--set", "sync.toHost.ingresses.enabled=true")
	t.Logf("virtual upgrade: %.1f s\n%s", time.Since(upStart).Seconds(), up)
	virtual = clientFor(t, kubeconfig)
	testenv.Eventually(t, 60*time.Second, func() error {
		return virtual.Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: networkingv1.IngressSpec{
			DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}})
	})
	testenv.Eventually(t, 60*time.Second, func() error {
		var hi networkingv1.Ingress
		if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: tr.HostName("web", "default")}, &hi); err != nil {
			return err
		}
		if b := hi.Spec.DefaultBackend; b == nil || b.Service == nil || b.Service.Name != tr.HostName("web", "default") {
			return fmt.Errorf("host Ingress backend %+v", hi.Spec.DefaultBackend)
		}
		return nil
	})
	waitReadyOnRealNode(t, host, hostNS, 2)

	// Pause and resume (etcd's data is on a claim of the host's default
	// StorageClass, the real node's local-path provisioner): paused, no pod
	// of the virtual cluster runs on the host; resumed, every object is
	// there and the web pods run again.
	if !strings.Contains(out, "etcd's data is on PersistentVolumeClaim vc-rn/data-rn-0") {
		t.Errorf("create did not put etcd's data on a claim:\n%s", out)
	}
	var cm corev1.ConfigMap
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-content"}, &cm); err != nil {
		t.Fatal(err)
	}
	cli(t, "virtual", "pause", "rn")
	var left corev1.PodList
	if err := host.List(ctx, &left, client.InNamespace(hostNS)); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d pods left in %s while paused: %v", len(left.Items), hostNS, itemsOf(&left))
	}
	if list := cli(t, "virtual", "list", "-o", "json"); !strings.Contains(list, `"status": "Paused"`) {
		t.Errorf("virtual list -o json while paused:\n%s", list)
	}
	cli(t, "virtual", "resume", "rn")
	virtual = clientFor(t, kubeconfig)
	var after corev1.ConfigMap
	testenv.Eventually(t, 60*time.Second, func() error {
		return virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-content"}, &after)
	})
	if after.UID != cm.UID || after.Data["index.html"] != cm.Data["index.html"] {
		t.Errorf("ConfigMap web-content after resume: uid %s (was %s), data %v", after.UID, cm.UID, after.Data)
	}
	waitReadyOnRealNode(t, host, hostNS, 2)

	cli(t, "virtual", "delete", "rn")
	testenv.Eventually(t, 90*time.Second, func() error {
		if n := containersOf(t, hostNS); n > 0 {
			return fmt.Errorf("%d containers of %s still on the node", n, hostNS)
		}
		return nil
	})
	for _, list := range []client.ObjectList{&corev1.PodList{}, &corev1.ServiceList{}, &corev1.SecretList{}, &corev1.ConfigMapList{},
		&corev1.ServiceAccountList{}, &corev1.PersistentVolumeClaimList{}, &appsv1.StatefulSetList{}} {
		if err := host.List(ctx, list, client.InNamespace(hostNS)); err != nil {
			t.Fatal(err)
		}
		for _, name := range itemsOf(list) {
			if name != "default" && name != "kube-root-ca.crt" {
				t.Errorf("%T: %s/%s left after virtual delete", list, hostNS, name)
			}
		}
	}

	cli(t, "dev", "down")
	tests.CheckNothingLeft(t)
}

// podOutput runs image with args as virtual pod name in namespace default
// until it succeeds, and returns its output, read as `kubectl logs` does
// through the virtual cluster (virtualCS).
func podOutput(t *testing.T, virtual client.Client, virtualCS kubernetes.Interface, name, image string, args ...string) string {
	t.Helper()
	return runPod(t, virtual, virtualCS, corev1.RestartPolicyOnFailure, corev1.PodSucceeded, name, image, args...)
}

// podFailure runs image with args as virtual pod name in namespace default,
// once, expects it to fail, and returns its output (through the virtual
// cluster).
func podFailure(t *testing.T, virtual client.Client, virtualCS kubernetes.Interface, name, image string, args ...string) string {
	t.Helper()
	return runPod(t, virtual, virtualCS, corev1.RestartPolicyNever, corev1.PodFailed, name, image, args...)
}

// runPod runs image with args as virtual pod name of namespace default
// with restart policy restart until it reaches phase want (it fails t on
// the other final phase, or after 90 s), and returns its output through the
// virtual cluster.
func runPod(t *testing.T, virtual client.Client, virtualCS kubernetes.Interface, restart corev1.RestartPolicy, want corev1.PodPhase,
	name, image string, args ...string) string {
	t.Helper()
	if err := virtual.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		RestartPolicy: restart, TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "run", Image: image, Args: args}}}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, func() error {
		var p corev1.Pod
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &p); err != nil {
			return err
		}
		if final := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed; final && p.Status.Phase != want {
			t.Fatalf("pod %s (%v) ended %s, want %s", name, args, p.Status.Phase, want)
		}
		if p.Status.Phase != want {
			return fmt.Errorf("pod %s (%v) phase %q", name, args, p.Status.Phase)
		}
		return nil
	})
	logs, err := virtualCS.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs of pod %s through the virtual cluster: %v", name, err)
	}
	return string(logs)
}

// kubectlPortForward runs `kubectl port-forward POD :PORT` with kubeconfig
// until t ends and returns the local address it forwards from.
func kubectlPortForward(t *testing.T, kubeconfig, pod string, port int) string {
	t.Helper()
	cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "port-forward", "pod/"+pod, fmt.Sprintf(":%d", port))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+)`).FindStringSubmatch(sc.Text()); m != nil {
				lines <- m[1]
			}
		}
		close(lines)
	}()
	select {
	case addr, ok := <-lines:
		if ok {
			return addr
		}
	case <-time.After(30 * time.Second):
	}
	t.Fatalf("kubectl port-forward %s printed no local address: %s", pod, stderr.String())
	return ""
}

// httpGet returns the body of a GET of url, or an error for a non-2xx answer.
func httpGet(url string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// useTestResolver makes a DNS server on the real node's IP, answering name
// with ip and NXDOMAIN for every other name, the resolver of the node's
// pods (realnode's ResolvConfFile) until t ends.
func useTestResolver(t *testing.T, name, ip string) {
	t.Helper()
	c := &hostcluster.Cluster{Dir: filepath.Join(tests.Dir, "host")}
	o := c.RealNodeOptions("", binaries.NodeSet{})
	addr := net.JoinHostPort(o.NodeIP().String(), "53")
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("test resolver on %s: %v", addr, err)
	}
	testenv.ServeDNS(t, pc, name, ip)
	before, err := os.ReadFile(o.ResolvConfFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.ResolvConfFile(), []byte("nameserver "+o.NodeIP().String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile(o.ResolvConfFile(), before, 0o644) })
}

// devUpReal runs `dev up` with the real node (skipping t without root),
// has `dev down` run at the end of t, and returns dev up's output.
func devUpReal(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a real node needs root")
	}
	out := cli(t, "dev", "up")
	t.Cleanup(func() { devDown(t) })
	harness.RequireRealNode(t, out)
	return out
}

// pushImages builds clustersync's images from this source tree and pushes
// them to the local registry of the host as tag e2e (`dev image`).
func pushImages(t *testing.T) { tests.PushImages(t, "e2e") }

// waitReadyOnRealNode waits until n pods of hostNS's web Deployment run on
// the real node with every container started and ready (the readiness
// probe passed: a real process answered).
func waitReadyOnRealNode(t *testing.T, host client.Client, hostNS string, n int) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func() error {
		var pods corev1.PodList
		if err := host.List(ctx, &pods, client.InNamespace(hostNS)); err != nil {
			return err
		}
		ready := 0
		var states []string
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, "web-") || p.DeletionTimestamp != nil {
				continue
			}
			ok := p.Spec.NodeName == hostcluster.RealNodeName && len(p.Status.ContainerStatuses) > 0
			for _, cs := range p.Status.ContainerStatuses {
				ok = ok && cs.Ready && cs.State.Running != nil
			}
			if ok {
				ready++
			}
			states = append(states, fmt.Sprintf("%s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase))
		}
		if ready != n {
			return fmt.Errorf("%d of %d web pods ready on %s: %v", ready, n, hostcluster.RealNodeName, states)
		}
		return nil
	})
}

func hostClientset(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(restConfig(t, kubeconfig))
}

// containersOf counts the containers of pods in host namespace ns that the
// real node's containerd has, running or not (asked over CRI).
func containersOf(t *testing.T, ns string) int {
	t.Helper()
	rs := tests.CRIClient(t)
	resp, err := rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"io.kubernetes.pod.namespace": ns}}})
	if err != nil {
		t.Fatalf("CRI ListContainers: %v", err)
	}
	return len(resp.Containers)
}

// serviceAccountConnect hands out scoped access to virtual cluster rn as
// an owner does: `virtual connect rn --service-account team/dev
// --cluster-role view --print` creates the account and its binding and
// prints a kubeconfig with its token, with which the user may read but not
// write; an account that does not exist, without --cluster-role, is
// refused with its name.
func serviceAccountConnect(t *testing.T, virtual client.Client) {
	t.Helper()
	if err := virtual.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	kc, notes, code := tests.Output("virtual", "connect", "rn", "--service-account", "team/dev", "--cluster-role", "view", "--token-expiration", "3600", "--print")
	if code != 0 {
		t.Fatalf("virtual connect rn --service-account team/dev: exit %d\n%s", code, notes)
	}
	for _, want := range []string{"Created service account team/dev", "Bound service account team/dev to ClusterRole view (ClusterRoleBinding vcluster-sa-dev-team)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("virtual connect --service-account says no %q:\n%s", want, notes)
		}
	}
	if strings.Contains(kc, "client-certificate-data") || !strings.Contains(kc, "token: ") {
		t.Errorf("the service account's kubeconfig holds a client certificate or no token:\n%s", notes)
	}
	path := filepath.Join(t.TempDir(), "dev.kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	dev := hostClientset(t, path)
	who, err := dev.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo.Username; u != "system:serviceaccount:team:dev" {
		t.Errorf("the kubeconfig authenticates as %q, want system:serviceaccount:team:dev", u)
	}
	if _, err := dev.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("ClusterRole view: list pods: %v", err)
	}
	_, err = dev.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("ClusterRole view: create a ConfigMap: %v, want Forbidden", err)
	}
	if _, notes, code := tests.Output("virtual", "connect", "rn", "--service-account", "team/missing", "--print"); code == 0 ||
		!strings.Contains(notes, "--service-account team/missing does not exist in the virtual cluster") {
		t.Errorf("virtual connect --service-account team/missing without --cluster-role: exit %d\n%s", code, notes)
	}
}
