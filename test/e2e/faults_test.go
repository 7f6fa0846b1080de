package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/translate"
	"github.com/clustersync/clustersync/test/internal/harness"
)

// Faults inside the control plane pod on the real node: the syncer is
// SIGKILLed five times within ten seconds, then kube-apiserver once, then
// etcd once, then the pod is deleted. The kubelet restarts each process (no
// supervisor of ours), the StatefulSet the pod, and after each fault the
// virtual cluster answers again, every tenant object is
// still there with its UID, and the host holds exactly the copies of the
// virtual pods and Services, none missing and no orphan.
func TestControlPlaneFaults(t *testing.T) {
	devUpReal(t)
	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	host := clientFor(t, hostKubeconfig)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cli(t, "virtual", "create", "faults", "--kubeconfig-out", kubeconfig)
	virtual := clientFor(t, kubeconfig)
	const hostNS = "vc-faults"
	tr := translate.Translator{VCluster: "faults", HostNamespace: hostNS}

	labels := map[string]string{"app": "web"}
	objs := []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "web", Image: images.Reference(images.DefaultRegistry, images.DemoRepository, "latest"),
					Args: []string{"serve", "--addr", ":8080"}}}}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{
			Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
	}
	for i := range 10 {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-%d", i), Namespace: "default"},
			Data: map[string]string{"n": fmt.Sprint(i)}})
	}
	for _, o := range objs {
		if err := virtual.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitReadyOnRealNode(t, host, hostNS, 2)
	before := virtualUIDs(t, virtual)
	cri := tests.CRIClient(t)
	// checkFaultFree waits until the control plane pod is back (came back
	// tells that it is the one after the fault) and Ready, then until
	// nothing is lost and the host matches.
	checkFaultFree := func(fault string, cameBack func(*corev1.Pod) error) {
		t.Helper()
		start := time.Now()
		testenv.Eventually(t, 3*time.Minute, func() error {
			var pod corev1.Pod
			if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: "faults-0"}, &pod); err != nil {
				return err
			}
			if err := cameBack(&pod); err != nil {
				return fmt.Errorf("%s: %w", fault, err)
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
					return fmt.Errorf("%s: control plane pod not Ready: %s", fault, c.Message)
				}
			}
			after, err := virtualUIDsErr(virtual)
			if err != nil {
				return fmt.Errorf("%s: virtual API: %w", fault, err)
			}
			if lost := diffUIDs(before, after); lost != "" {
				return fmt.Errorf("%s: virtual objects lost or replaced: %s", fault, lost)
			}
			return hostMatchesVirtual(virtual, host, tr)
		})
		t.Logf("%s: recovered, nothing lost, host == translate(virtual) after %.1f s", fault, time.Since(start).Seconds())
	}

	// The syncer, five times within ten seconds: each new process is
	// killed as soon as it runs.
	n0 := podRestarts(t, host, hostNS, "syncer")
	killed, last := 0, 0
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if pid := containerPID(t, cri, hostNS, "syncer"); pid > 0 && pid != last {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed, last = killed+1, pid
			}
		}
		return killed == 5, nil
	})
	if killed < 5 {
		t.Errorf("the syncer was killed %d times in 10 s, want 5 (is the kubelet's restart back-off longer than a second?)", killed)
	}
	checkFaultFree(fmt.Sprintf("syncer SIGKILLed %d times in 10 s", killed), restarted("syncer", n0))

	for _, c := range []string{"kube-apiserver", "etcd"} {
		n := podRestarts(t, host, hostNS, c)
		pid := containerPID(t, cri, hostNS, c)
		if pid <= 0 {
			t.Fatalf("no running %s container in %s", c, hostNS)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		checkFaultFree(c+" SIGKILLed", restarted(c, n))
	}

	// The whole pod: etcd's data is on its claim (the real node's
	// default StorageClass), so the new pod has every object.
	var old corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: "faults-0"}, &old); err != nil {
		t.Fatal(err)
	}
	if err := host.Delete(ctx, &old); err != nil {
		t.Fatal(err)
	}
	checkFaultFree("control plane pod deleted", func(p *corev1.Pod) error {
		if p.UID == old.UID {
			return fmt.Errorf("pod %s not replaced yet", p.Name)
		}
		return nil
	})
	cli(t, "virtual", "delete", "faults")
}

// virtualUIDs are the UIDs of the test's objects in the virtual namespace
// default, by kind/name.
func virtualUIDs(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	m, err := virtualUIDsErr(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func virtualUIDsErr(c client.Client) (map[string]string, error) {
	m := map[string]string{}
	for kind, list := range map[string]client.ObjectList{"ConfigMap": &corev1.ConfigMapList{}, "Service": &corev1.ServiceList{}, "Deployment": &appsv1.DeploymentList{}} {
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			return nil, err
		}
		items, err := metaOf(list)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			if o.Name != "kube-root-ca.crt" && o.Name != "kubernetes" {
				m[kind+"/"+o.Name] = string(o.UID)
			}
		}
	}
	return m, nil
}

// metaOf returns the object metadata of list's items.
func metaOf(list client.ObjectList) ([]metav1.ObjectMeta, error) {
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	var items struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]metav1.ObjectMeta, len(items.Items))
	for i, it := range items.Items {
		out[i] = it.Metadata
	}
	return out, nil
}

// diffUIDs names the keys of before missing from after or with another
// UID; "" when none.
func diffUIDs(before, after map[string]string) string {
	var bad []string
	for k, uid := range before {
		if after[k] != uid {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return strings.Join(bad, ", ")
}

// hostMatchesVirtual checks that the host namespace holds exactly one copy
// of each virtual pod and Service of namespace default (by the translated
// name), and no copy whose virtual object is gone.
func hostMatchesVirtual(virtual, host client.Client, tr translate.Translator) error {
	for _, pair := range []struct{ v, h client.ObjectList }{
		{&corev1.PodList{}, &corev1.PodList{}}, {&corev1.ServiceList{}, &corev1.ServiceList{}},
	} {
		if err := virtual.List(ctx, pair.v, client.InNamespace("default")); err != nil {
			return err
		}
		if err := host.List(ctx, pair.h, client.InNamespace(tr.HostNamespace),
			client.MatchingLabels{translate.LabelManagedBy: tr.VCluster, translate.LabelNamespace: "default"}); err != nil {
			return err
		}
		vItems, err := metaOf(pair.v)
		if err != nil {
			return err
		}
		hItems, err := metaOf(pair.h)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, v := range vItems {
			if v.Name != "kubernetes" {
				want[tr.HostName(v.Name, "default")] = true
			}
		}
		got := map[string]bool{}
		for _, h := range hItems {
			if h.DeletionTimestamp == nil {
				got[h.Name] = true
			}
		}
		for name := range want {
			if !got[name] {
				return fmt.Errorf("%T: host copy %s missing", pair.h, name)
			}
		}
		for name := range got {
			if !want[name] {
				return fmt.Errorf("%T: host object %s has no virtual object (orphan)", pair.h, name)
			}
		}
	}
	return nil
}

// restarted tells that container has restarted more than before times.
func restarted(container string, before int32) func(*corev1.Pod) error {
	return func(p *corev1.Pod) error {
		if n := restarts(p, container); n <= before {
			return fmt.Errorf("container %s restarted %d times, want more than %d", container, n, before)
		}
		return nil
	}
}

// restarts is the restart count of container name of pod (sidecars are
// init containers).
func restarts(pod *corev1.Pod, name string) int32 {
	for _, s := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if s.Name == name {
			return s.RestartCount
		}
	}
	return -1
}

func podRestarts(t *testing.T, host client.Client, ns, container string) int32 {
	t.Helper()
	var pod corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: strings.TrimPrefix(ns, "vc-") + "-0"}, &pod); err != nil {
		t.Fatal(err)
	}
	return restarts(&pod, container)
}

// containerPID is harness.ContainerPID, failing t when CRI does.
func containerPID(t *testing.T, rs runtimeapi.RuntimeServiceClient, ns, name string) int {
	t.Helper()
	pid, err := harness.ContainerPID(ctx, rs, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
