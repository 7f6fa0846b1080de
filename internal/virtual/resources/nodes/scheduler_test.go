package nodes

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func requesting(phase corev1.PodPhase, containers ...corev1.ResourceList) corev1.Pod {
	p := corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
	for _, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: r}})
	}
	return p
}

func TestAllocatable(t *testing.T) {
	host := list("cpu", "2", "memory", "4Gi", "pods", "110")
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want corev1.ResourceList
	}{
		{"no pods", nil, host},
		{"two containers and a pod", []corev1.Pod{
			requesting(corev1.PodRunning, list("cpu", "250m", "memory", "256Mi"), list("cpu", "100m")),
			requesting(corev1.PodPending, list("cpu", "50m")),
		}, list("cpu", "1600m", "memory", "3840Mi", "pods", "110")},
		{"ended pods free their requests", []corev1.Pod{
			requesting(corev1.PodSucceeded, list("cpu", "1")), requesting(corev1.PodFailed, list("memory", "1Gi")),
		}, host},
		{"never below zero", []corev1.Pod{requesting(corev1.PodRunning, list("cpu", "3"))}, list("cpu", "0", "memory", "4Gi", "pods", "110")},
		{"a resource the node lacks is ignored", []corev1.Pod{requesting(corev1.PodRunning, list("example.com/gpu", "1"))}, host},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := host.DeepCopy()
			got := Allocatable(host, tc.pods)
			for name, q := range tc.want {
				if g := got[name]; g.Cmp(q) != 0 {
					t.Errorf("%s = %s, want %s", name, g.String(), q.String())
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("Allocatable = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(host, before) {
				t.Errorf("host allocatable changed: %v", host)
			}
		})
	}
}

func TestForeign(t *testing.T) {
	own := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "vc-ns", Labels: map[string]string{translate.LabelManagedBy: "vc1"}}}
	other := own.DeepCopy()
	other.Labels[translate.LabelManagedBy] = "vc2"
	elsewhere := own.DeepCopy()
	elsewhere.Namespace = "team"
	controlPlane := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "vc-ns", Labels: map[string]string{"app": "vcluster"}}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{{"the virtual cluster's copy", own, false}, {"another virtual cluster's", other, true},
		{"the same label in another namespace", elsewhere, true}, {"the control plane pod", controlPlane, true}} {
		if got := Foreign(tc.pod, "vc-ns", "vc1"); got != tc.want {
			t.Errorf("%s: Foreign = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTenantResources(t *testing.T) {
	host := list("cpu", "2", "nvidia.com/gpu", "1")
	virtual := list("cpu", "2", "nvidia.com/gpu", "1", "scheduling.k8s.io/foo", "5", "example.com/gone", "1",
		"kubernetes.io/batch", "1", "hugepages-2Mi", "0")
	for _, tc := range []struct {
		name string
		base []corev1.ResourceName
		want corev1.ResourceList
	}{
		// example.com/gone was the host's at the last sync: the host
		// removed it, so the copy loses it too.
		{"with a base", []corev1.ResourceName{"cpu", "example.com/gone", "nvidia.com/gpu"}, list("scheduling.k8s.io/foo", "5")},
		{"without a base", nil, list("scheduling.k8s.io/foo", "5", "example.com/gone", "1")},
	} {
		if got := TenantResources(tc.base, virtual, host); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: TenantResources = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := TenantResources(nil, host, host); got != nil {
		t.Errorf("nothing added: %v, want nil", got)
	}
}

func TestSchedulerView(t *testing.T) {
	host := &corev1.Node{Status: corev1.NodeStatus{Capacity: list("cpu", "2", "pods", "110"), Allocatable: list("cpu", "2", "pods", "110")}}
	cur := host.DeepCopy()
	cur.Status.Capacity["scheduling.k8s.io/foo"] = resource.MustParse("5")
	cur.Status.Allocatable["scheduling.k8s.io/foo"] = resource.MustParse("5")
	want := host.DeepCopy()
	schedulerView(want, cur, host, []corev1.Pod{requesting(corev1.PodRunning, list("cpu", "500m"))}, []corev1.ResourceName{"cpu", "pods"})
	if got := want.Status.Allocatable; got.Cpu().String() != "1500m" || got.Name("scheduling.k8s.io/foo", resource.DecimalSI).String() != "5" {
		t.Errorf("allocatable %v, want cpu 1500m and the tenant's scheduling.k8s.io/foo 5", got)
	}
	if got := want.Status.Capacity; got.Cpu().String() != "2" || got.Name("scheduling.k8s.io/foo", resource.DecimalSI).String() != "5" {
		t.Errorf("capacity %v, want cpu 2 and the tenant's scheduling.k8s.io/foo 5", got)
	}
	if _, ok := host.Status.Allocatable["scheduling.k8s.io/foo"]; ok || host.Status.Allocatable.Cpu().String() != "2" {
		t.Errorf("the host node changed: %v", host.Status)
	}
}

func TestHostPodTransform(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"k": "v"},
		Annotations: map[string]string{"big": "x"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "img", Env: []corev1.EnvVar{{Name: "E"}},
			Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}
	o, err := HostPodTransform(p)
	if err != nil {
		t.Fatal(err)
	}
	got := o.(*corev1.Pod)
	if got.Annotations != nil || got.ManagedFields != nil || got.Spec.Containers[0].Image != "" || got.Spec.Containers[0].Env != nil || got.Status.PodIP != "" {
		t.Errorf("kept more than needed: %+v", got)
	}
	if got.Name != "a" || got.Namespace != "n" || got.Labels["k"] != "v" || got.Spec.NodeName != "node1" || got.Status.Phase != corev1.PodRunning ||
		got.Spec.Containers[0].Resources.Requests.Cpu().String() != "1" {
		t.Errorf("lost what Allocatable and Foreign read: %+v", got)
	}
}
