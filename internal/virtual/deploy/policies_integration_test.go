package deploy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The chart installed into a real host (kube-apiserver,
// kube-controller-manager, kube-scheduler and one kwok node, which like the
// local real node reports no ephemeral storage) leaves a ResourceQuota, a
// LimitRange and two NetworkPolicies in the host namespace; the API server
// admits the control plane pod under them without changing its resources,
// the scheduler places it on the node, the API server gives a
// container without resources the LimitRange's defaults and refuses a
// NodePort Service. (Whether the NetworkPolicies are enforced depends on the
// host's CNI; the local clusters have none that does.)
func TestInstallPolicies(t *testing.T) {
	b := binaries.Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	host, err := hostcluster.Create(ctx, hostcluster.Options{
		Name: "cs-test-" + rand.String(6), Dir: filepath.Join(dir, "host"), Nodes: 1, Binaries: b,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := host.Delete(context.Background()); err != nil {
			t.Errorf("delete host: %v", err)
		}
	})
	kube, err := kubernetes.NewForConfig(host.Config)
	if err != nil {
		t.Fatal(err)
	}
	const name, ns = "pol", "vc-pol"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vals, cfg, err := Values(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewHelm(host.Kubeconfig, nil).Install(ctx, name, ns, vals); err != nil {
		t.Fatal(err)
	}

	q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "vc-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range cfg.Policies.ResourceQuota.Quota {
		if got := q.Spec.Hard[corev1.ResourceName(k)]; got.Cmp(v) != 0 {
			t.Errorf("hard[%s] = %s, want %s", k, got.String(), v.String())
		}
	}
	lr, err := kube.CoreV1().LimitRanges(ns).Get(ctx, "vc-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Spec.Limits) != 1 || lr.Spec.Limits[0].Default.Memory().String() != "512Mi" {
		t.Errorf("limit range %+v", lr.Spec.Limits)
	}
	nps, err := kube.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var cp *networkingv1.NetworkPolicy
	for i, p := range nps.Items {
		names = append(names, p.Name)
		if p.Name == "vc-cp-"+name {
			cp = &nps.Items[i]
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"vc-cp-" + name, "vc-work-" + name}) || cp == nil {
		t.Fatalf("network policies %v", names)
	}
	// The control plane may reach the host API server's own port, which the
	// chart read from the host's kubernetes EndpointSlice at install.
	slice, err := kube.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slice.Ports {
		t.Logf("host API server port %d", *p.Port)
		if !egressPort(cp, *p.Port) {
			t.Errorf("the control plane's egress does not allow the host API server's port %d: %+v", *p.Port, cp.Spec.Egress)
		}
	}

	// The StatefulSet's pod passes quota admission (the quota's status is
	// computed first, so it may take a few tries of the StatefulSet
	// controller) with its resources as the chart wrote them.
	var pod *corev1.Pod
	poll(ctx, t, "the control plane pod", func() error {
		pod, err = kube.CoreV1().Pods(ns).Get(ctx, PodName(name), metav1.GetOptions{})
		return err
	})
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.Name == "kube-apiserver" && (c.Resources.Limits.Memory().String() != "2Gi" || !c.Resources.Requests.StorageEphemeral().IsZero()) {
			t.Errorf("kube-apiserver resources %+v, want the chart's (2Gi memory limit, no ephemeral storage requested)", c.Resources)
		}
	}
	poll(ctx, t, "the control plane pod on the node", func() error {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, PodName(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName == "" {
			return fmt.Errorf("not scheduled: %+v", p.Status.Conditions)
		}
		return nil
	})
	poll(ctx, t, "the quota to count the control plane pod", func() error {
		q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "vc-"+name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pods, mem := q.Status.Used["count/pods"], q.Status.Used[corev1.ResourceRequestsMemory]; pods.String() != "1" || mem.String() != "576Mi" {
			return fmt.Errorf("used %v", q.Status.Used)
		}
		return nil
	})

	// A tenant pod without resources gets the LimitRange's defaults.
	bare := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns, Labels: map[string]string{translate.LabelManagedBy: name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/app:1"}}},
	}
	bare, err = kube.CoreV1().Pods(ns).Create(ctx, bare, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// ephemeral-storage: an explicit 0 request, not the 8Gi limit copied.
	if r := bare.Spec.Containers[0].Resources; r.Limits.Memory().String() != "512Mi" || r.Requests.Cpu().String() != "100m" ||
		r.Requests.StorageEphemeral().String() != "0" || r.Limits.StorageEphemeral().String() != "8Gi" {
		t.Errorf("a container without resources got %+v, want the LimitRange's defaults", r)
	}

	// services.nodeports 0: a NodePort Service is refused.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: ns}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a NodePort Service: %v, want forbidden by the quota", err)
	}

	// controlPlane.serviceMonitor: refused while the host lacks the
	// Prometheus Operator's kind; with its CRD, an upgrade makes
	// ServiceMonitor vc-NAME, labelled with the file's release, selecting
	// the API server's Service and not the headless one.
	smVals, smCfg, err := Values(nil, []string{"controlPlane.serviceMonitor.enabled=true", "controlPlane.serviceMonitor.labels.release=prometheus"})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHostKinds(kube, smCfg); err == nil ||
		!strings.Contains(err.Error(), "controlPlane.serviceMonitor.enabled: the host does not serve monitoring.coreos.com/v1 servicemonitors; install the Prometheus Operator's CRDs") {
		t.Errorf("a ServiceMonitor on a host without the kind: %v", err)
	}
	testenv.InstallCRDs(t, host.Config, time.Minute, testenv.ServiceMonitorCRD())
	if err := CheckHostKinds(kube, smCfg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewHelm(host.Kubeconfig, nil).Upgrade(ctx, name, ns, smVals); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(host.Config)
	sm, err := dyn.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}).
		Namespace(ns).Get(ctx, "vc-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for svc, want := range map[string]bool{name: true, name + "-headless": false} {
		s, err := kube.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := labels.SelectorFromSet(selector).Matches(labels.Set(s.Labels)); got != want {
			t.Errorf("ServiceMonitor selector %v selects Service %s: %t, want %t", selector, svc, got, want)
		}
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v, want the file's release", sm.GetLabels())
	}

	// A host namespace the values name beyond the cluster's own must
	// exist: the chart puts a Role there.
	_, nsCfg, err := Values(nil, []string{"networking.replicateServices.toHost[0].from=default/web",
		"networking.replicateServices.toHost[0].to=team-shared/web", "networking.replicateServices.fromHost[0].from=default/kubernetes",
		"networking.replicateServices.fromHost[0].to=host/kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	err = CheckHostNamespaces(ctx, kube, name, ns, nsCfg)
	if err == nil || err.Error() != "networking.replicateServices.toHost[0].to: host namespace team-shared does not exist; create it first (kubectl create namespace team-shared)" {
		t.Errorf("a missing host namespace: %v", err)
	}
}

// egressPort tells whether one of p's egress rules allows TCP port to any
// destination.
func egressPort(p *networkingv1.NetworkPolicy, port int32) bool {
	for _, r := range p.Spec.Egress {
		if len(r.To) != 0 {
			continue
		}
		for _, pp := range r.Ports {
			if pp.Port != nil && pp.Port.IntVal == port && (pp.Protocol == nil || *pp.Protocol == corev1.ProtocolTCP) {
				return true
			}
		}
	}
	return false
}

// poll calls f every 500 ms until it returns nil, failing the test with
// f's last error when ctx ends.
func poll(ctx context.Context, t *testing.T, what string, f func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
	}
}
