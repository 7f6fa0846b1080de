package kubeletproxy

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func TestNodeOf(t *testing.T) {
	byHostname := func(dashed string) string {
		if dashed == "worker-1-example-com" {
			return "worker-1.example.com"
		}
		return ""
	}
	byIP := func(ip string) string {
		if ip == "10.96.0.42" {
			return "worker-2"
		}
		return ""
	}
	for host, want := range map[string]string{
		"worker-1-example-com.nodes.vcluster.com:10250":  "worker-1.example.com",
		"WORKER-1-EXAMPLE-COM.nodes.vcluster.com.":       "worker-1.example.com",
		"other.nodes.vcluster.com":                       "",
		"a.b.nodes.vcluster.com":                         "",
		"10.96.0.42:10250":                               "worker-2",
		"10.96.0.43":                                     "",
		"kubernetes.default.svc:10250":                   "",
		"worker-1-example-com.nodes.vcluster.com.evil:1": "",
	} {
		if got := NodeOf(host, byHostname, byIP); got != want {
			t.Errorf("NodeOf(%q) = %q, want %q", host, got, want)
		}
	}
	if got := NodeOf("10.96.0.42:10250", byHostname, nil); got != "" {
		t.Errorf("without byIP an IP names node %q", got)
	}
	if got := translate.NodeHostname("worker-1.example.com"); got != "worker-1-example-com.nodes.vcluster.com" {
		t.Errorf("NodeHostname = %s", got)
	}
}

func TestTenantPaths(t *testing.T) {
	for path, want := range map[string]struct {
		kind TenantPath
		sub  string
	}{
		"/metrics":          {Metrics, "metrics"},
		"/metrics/cadvisor": {Metrics, "metrics"},
		"/metrics/resource": {Metrics, "metrics"},
		"/stats/summary":    {Stats, "stats"},
		"/pods/":            {Pods, "proxy"},
		"/healthz":          {Healthz, "proxy"},
		"/run/ns/pod/c":     {NotServed, "proxy"},
		"/exec/ns/pod/c":    {NotServed, "proxy"},
		"/containerLogs/a":  {NotServed, "proxy"},
		"/logs/syslog":      {NotServed, "log"},
		"/metricsx":         {NotServed, "proxy"},
		"/configz":          {NotServed, "proxy"},
	} {
		if got := TenantPathOf(path); got != want.kind {
			t.Errorf("TenantPathOf(%s) = %d, want %d", path, got, want.kind)
		}
		if got := KubeletSubresource(path); got != want.sub {
			t.Errorf("KubeletSubresource(%s) = %s, want %s", path, got, want.sub)
		}
	}
}

func rewrite() Rewrite {
	owner := func(m map[string]types.NamespacedName) Owner {
		return func(h string) (types.NamespacedName, bool) { v, ok := m[h]; return v, ok }
	}
	return Rewrite{HostNamespace: "vc-host",
		Pods:   owner(map[string]types.NamespacedName{"web-0-x-shop-x-vc": {Namespace: "shop", Name: "web-0"}}),
		Claims: owner(map[string]types.NamespacedName{"data-web-0-x-shop-x-vc": {Namespace: "shop", Name: "data-web-0"}}),
	}
}

func TestRewriteMetrics(t *testing.T) {
	in := `# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="vc-host",pod="web-0-x-shop-x-vc"} 1.5
container_cpu_usage_seconds_total{container="app",namespace="vc-host",pod="vc-0"} 9
container_cpu_usage_seconds_total{container="app",namespace="other-tenant",pod="db-0-x-x-x-other"} 7
container_cpu_usage_seconds_total{container="",id="/"} 100
# HELP kubelet_volume_stats_used_bytes Number of used bytes in the volume
# TYPE kubelet_volume_stats_used_bytes gauge
kubelet_volume_stats_used_bytes{namespace="vc-host",persistentvolumeclaim="data-web-0-x-shop-x-vc"} 42
kubelet_volume_stats_used_bytes{namespace="vc-host",persistentvolumeclaim="data-vc-0"} 43
# HELP kubelet_running_pods Number of pods running
# TYPE kubelet_running_pods gauge
kubelet_running_pods 12
# HELP kube_pod_only_namespace A sample with only a namespace
# TYPE kube_pod_only_namespace gauge
kube_pod_only_namespace{namespace="vc-host"} 1
`
	out, err := rewrite().RewriteMetrics([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		`container_cpu_usage_seconds_total{container="app",namespace="shop",pod="web-0"} 1.5`,
		`container_cpu_usage_seconds_total{container="",id="/"} 100`,
		`kubelet_volume_stats_used_bytes{namespace="shop",persistentvolumeclaim="data-web-0"} 42`,
		`kubelet_running_pods 12`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in:\n%s", want, got)
		}
	}
	for _, not := range []string{"vc-0", "other-tenant", "vc-host", "data-vc-0", "kube_pod_only_namespace"} {
		if strings.Contains(got, not) {
			t.Errorf("%s leaks into:\n%s", not, got)
		}
	}
	if _, err := rewrite().RewriteMetrics([]byte("not { metrics")); err == nil {
		t.Error("garbage parses")
	}
}

func TestRewriteSummary(t *testing.T) {
	in := statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: "worker-1"}, Pods: []statsv1alpha1.PodStats{
		{PodRef: statsv1alpha1.PodReference{Name: "web-0-x-shop-x-vc", Namespace: "vc-host", UID: "host-uid"}, VolumeStats: []statsv1alpha1.VolumeStats{
			{Name: "data", PVCRef: &statsv1alpha1.PVCReference{Name: "data-web-0-x-shop-x-vc", Namespace: "vc-host"}},
			{Name: "cache"},
			{Name: "stolen", PVCRef: &statsv1alpha1.PVCReference{Name: "data-vc-0", Namespace: "vc-host"}},
		}},
		{PodRef: statsv1alpha1.PodReference{Name: "vc-0", Namespace: "vc-host"}},
		{PodRef: statsv1alpha1.PodReference{Name: "web-0-x-shop-x-vc", Namespace: "elsewhere"}},
	}}
	data, _ := json.Marshal(in)
	out, err := rewrite().RewriteSummary(data, func(k types.NamespacedName) string { return "virtual-uid-" + k.Name })
	if err != nil {
		t.Fatal(err)
	}
	var got statsv1alpha1.Summary
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Node.NodeName != "worker-1" || len(got.Pods) != 1 {
		t.Fatalf("summary %+v", got)
	}
	p := got.Pods[0]
	if p.PodRef != (statsv1alpha1.PodReference{Name: "web-0", Namespace: "shop", UID: "virtual-uid-web-0"}) {
		t.Errorf("podRef %+v", p.PodRef)
	}
	if len(p.VolumeStats) != 2 || *p.VolumeStats[0].PVCRef != (statsv1alpha1.PVCReference{Name: "data-web-0", Namespace: "shop"}) || p.VolumeStats[1].Name != "cache" {
		t.Errorf("volumes %+v", p.VolumeStats)
	}
}

func TestRewritePods(t *testing.T) {
	in := corev1.PodList{Items: []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web-0-x-shop-x-vc", Namespace: "vc-host"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "vc-0", Namespace: "vc-host"}},
	}}
	data, _ := json.Marshal(in)
	virtual := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "v"}}
	out, err := rewrite().RewritePods(data, func(k types.NamespacedName) (*corev1.Pod, bool) {
		return virtual, k == types.NamespacedName{Namespace: "shop", Name: "web-0"}
	})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.PodList
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 1 || got.Items[0].Name != "web-0" || got.Items[0].Namespace != "shop" {
		t.Errorf("pods %+v", got.Items)
	}
}
