package metricsapi

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func usage(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func pod(ns, name, node string, labels map[string]string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
}

func hostPodMetrics(name string, containers ...metricsv1beta1.ContainerMetrics) metricsv1beta1.PodMetrics {
	return metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vc-t1", Labels: map[string]string{"vcluster.loft.sh/managed-by": "t1"}},
		Timestamp:  metav1.NewTime(time.Unix(1000, 0)), Window: metav1.Duration{Duration: 10 * time.Second}, Containers: containers,
	}
}

func TestPodMetrics(t *testing.T) {
	tr := translate.Translator{VCluster: "t1", HostNamespace: "vc-t1"}
	web := pod("demo", "web-0", "n1", map[string]string{"app": "web"})
	db := pod("demo", "db-0", "n1", nil)
	pending := pod("demo", "pending", "", nil)
	host := map[string]metricsv1beta1.PodMetrics{
		tr.HostName("web-0", "demo"): hostPodMetrics(tr.HostName("web-0", "demo"), metricsv1beta1.ContainerMetrics{Name: "app", Usage: usage("5m", "10Mi")}),
		tr.HostName("db-0", "demo"):  hostPodMetrics(tr.HostName("db-0", "demo"), metricsv1beta1.ContainerMetrics{Name: "db", Usage: usage("20m", "100Mi")}),
		"someone-elses-pod":          hostPodMetrics("someone-elses-pod", metricsv1beta1.ContainerMetrics{Name: "x", Usage: usage("1", "1Gi")}),
	}
	got := PodMetrics([]corev1.Pod{web, pending, db}, host, tr.HostName)
	if len(got) != 2 {
		t.Fatalf("got %d PodMetrics, want 2 (the pending pod has none, and only the virtual pods asked for appear): %+v", len(got), got)
	}
	w := got[0]
	if w.Name != "web-0" || w.Namespace != "demo" || w.Labels["app"] != "web" || len(w.Labels) != 1 {
		t.Errorf("web-0's metrics are under %s/%s labels %v; want the virtual name, namespace and labels", w.Namespace, w.Name, w.Labels)
	}
	if w.APIVersion != "metrics.k8s.io/v1beta1" || w.Kind != "PodMetrics" {
		t.Errorf("type %s %s", w.APIVersion, w.Kind)
	}
	if len(w.Containers) != 1 || w.Containers[0].Name != "app" || w.Containers[0].Usage.Cpu().MilliValue() != 5 {
		t.Errorf("web-0's containers: %+v", w.Containers)
	}
	if !w.Timestamp.Time.Equal(time.Unix(1000, 0)) || w.Window.Duration != 10*time.Second {
		t.Errorf("timestamp %v window %v; want the host's", w.Timestamp, w.Window)
	}
	if got[1].Name != "db-0" {
		t.Errorf("second is %s, want db-0 (the pods' order)", got[1].Name)
	}
	if got := PodMetrics(nil, host, tr.HostName); got == nil || len(got) != 0 {
		t.Errorf("no pods: %v, want an empty list (items: [] in JSON)", got)
	}
}

func TestNodeMetrics(t *testing.T) {
	hostNode := metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"host-only": "x"}},
		Timestamp: metav1.NewTime(time.Unix(1000, 0)), Window: metav1.Duration{Duration: 10 * time.Second}, Usage: usage("1500m", "8Gi")}
	host := map[string]metricsv1beta1.NodeMetrics{"n1": hostNode, "n2": {ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Usage: usage("2", "4Gi")}}
	fake := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{translate.LabelFakeNode: "true"}}}
	real := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"kubernetes.io/hostname": "n2"}}}
	unknown := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"}}

	pods := []corev1.Pod{pod("demo", "web-0", "n1", nil), pod("demo", "web-1", "n1", nil), pod("other", "x", "n2", nil)}
	podMetrics := []metricsv1beta1.PodMetrics{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-0"}, Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: usage("5m", "10Mi")}, {Name: "sidecar", Usage: usage("1m", "2Mi")}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-1"}, Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: usage("4m", "20Mi")}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "gone"}, Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: usage("100m", "1Gi")}}},
	}
	byNode := UsageByNode(pods, podMetrics)
	n1 := byNode["n1"]
	if cpu := n1.Cpu().MilliValue(); cpu != 10 {
		t.Errorf("n1's pods use %dm CPU, want 10m (5m+1m+4m; a pod not in the list is not counted)", cpu)
	}
	if mem := n1.Memory().Value(); mem != 32*1024*1024 {
		t.Errorf("n1's pods use %d bytes, want 32Mi", mem)
	}

	got := NodeMetrics([]corev1.Node{fake, real, unknown}, host, byNode)
	if len(got) != 2 {
		t.Fatalf("got %d NodeMetrics, want 2 (n3 has no host metrics): %+v", len(got), got)
	}
	if got[0].Name != "n1" || got[0].Usage.Cpu().MilliValue() != 10 || got[0].Usage.Memory().Value() != 32*1024*1024 {
		t.Errorf("fake node n1: usage %v; want only the tenant's pods' 10m CPU, 32Mi (not the host machine's 1500m, 8Gi)", got[0].Usage)
	}
	if got[0].Labels[translate.LabelFakeNode] != "true" || got[0].Labels["host-only"] != "" {
		t.Errorf("fake node n1: labels %v; want the virtual node's", got[0].Labels)
	}
	if !got[0].Timestamp.Equal(&hostNode.Timestamp) || got[0].Kind != "NodeMetrics" {
		t.Errorf("fake node n1: timestamp %v kind %q", got[0].Timestamp, got[0].Kind)
	}
	if got[1].Name != "n2" || got[1].Usage.Cpu().MilliValue() != 2000 {
		t.Errorf("real node n2: usage %v; want the host node's 2 CPUs", got[1].Usage)
	}
	idle := NodeMetrics([]corev1.Node{fake}, host, nil)
	if len(idle) != 1 || !idle[0].Usage.Cpu().IsZero() || !idle[0].Usage.Memory().IsZero() {
		t.Errorf("fake node without pods: %+v, want zero usage", idle)
	}
	// The host's usage map is not changed by the sum.
	if hostNode.Usage.Cpu().MilliValue() != 1500 {
		t.Errorf("host usage changed: %v", hostNode.Usage)
	}
}
