package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func resources(cpu string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

func TestResourcesHash(t *testing.T) {
	pod := func(cpu string, names ...string) *corev1.Pod {
		p := &corev1.Pod{}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: "any", Resources: resources(cpu)})
		}
		return p
	}
	a := ResourcesHash(pod("100m", "c1"))
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		same bool
	}{
		{"same resources, other image and labels", func() *corev1.Pod {
			p := pod("100m", "c1")
			p.Spec.Containers[0].Image = "other"
			p.Labels = map[string]string{"a": "b"}
			return p
		}(), true},
		{"same quantity, other spelling", pod("0.1", "c1"), true},
		{"resized", pod("200m", "c1"), false},
		{"another container", pod("100m", "c2"), false},
	} {
		if got := ResourcesHash(tt.pod) == a; got != tt.same {
			t.Errorf("%s: same hash %v, want %v", tt.name, got, tt.same)
		}
	}
	if len(a) != 16 {
		t.Errorf("hash %q", a)
	}
}

func TestResizedResources(t *testing.T) {
	host := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "rewrite-hosts", Resources: resources("50m")}},
		Containers:     []corev1.Container{{Name: "c1", Resources: resources("100m")}, {Name: "c2", Resources: resources("100m")}},
	}}
	virtual := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c1", Resources: resources("100m")}, {Name: "c2", Resources: resources("300m")}},
	}}
	after := ResizedResources(virtual, host)
	if after == nil || after.Spec.Containers[1].Resources.Limits.Cpu().String() != "300m" ||
		after.Spec.Containers[0].Resources.Limits.Cpu().String() != "100m" || after.Spec.InitContainers[0].Resources.Limits.Cpu().String() != "50m" {
		t.Fatalf("after %+v", after)
	}
	if host.Spec.Containers[1].Resources.Limits.Cpu().String() != "100m" {
		t.Error("ResizedResources changed the host pod")
	}
	if ResizedResources(virtual, after) != nil {
		t.Error("nothing to resize, yet a pod")
	}
}

func TestObservedGeneration(t *testing.T) {
	virtual := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: corev1.PodStatus{ObservedGeneration: 1}}
	for _, tt := range []struct {
		name                  string
		hostGen, hostObserved int64
		inSync                bool
		want                  int64
	}{
		{"the host's kubelet caught up", 5, 5, true, 2},
		{"the host's kubelet is behind", 5, 4, true, 1},
		{"a resize just sent", 5, 5, false, 1},
	} {
		host := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: tt.hostGen}, Status: corev1.PodStatus{ObservedGeneration: tt.hostObserved}}
		if got := ObservedGeneration(virtual, host, tt.inSync); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
