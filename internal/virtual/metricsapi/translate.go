package metricsapi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// PodMetrics returns the virtual PodMetrics of the virtual pods pods, in
// their order: for each pod whose host copy (hostName(name, namespace))
// has metrics in host (keyed by host pod name), those metrics under the
// virtual pod's name, namespace and labels. A pod without host metrics
// (not yet scraped, not running) is left out, as metrics-server leaves it
// out.
func PodMetrics(pods []corev1.Pod, host map[string]metricsv1beta1.PodMetrics, hostName func(name, namespace string) string) []metricsv1beta1.PodMetrics {
	out := []metricsv1beta1.PodMetrics{}
	for _, p := range pods {
		h, ok := host[hostName(p.Name, p.Namespace)]
		if !ok {
			continue
		}
		out = append(out, metricsv1beta1.PodMetrics{
			TypeMeta: metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: "PodMetrics"},
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels,
				CreationTimestamp: h.CreationTimestamp},
			Timestamp:  h.Timestamp,
			Window:     h.Window,
			Containers: h.Containers,
		})
	}
	return out
}

// NodeMetrics returns the NodeMetrics of the virtual nodes nodes, in their
// order. A virtual node has its host node's name; a node without host
// metrics (host, keyed by node name) is left out. A real node (synced from
// the host) shows the host node's usage. A fake node
// (translate.LabelFakeNode) shows only what the tenant's own pods on it use
// (podUsage, keyed by node name; zero without pods), never the host
// machine's: other tenants' load is not this tenant's to see.
func NodeMetrics(nodes []corev1.Node, host map[string]metricsv1beta1.NodeMetrics, podUsage map[string]corev1.ResourceList) []metricsv1beta1.NodeMetrics {
	out := []metricsv1beta1.NodeMetrics{}
	for _, n := range nodes {
		h, ok := host[n.Name]
		if !ok {
			continue
		}
		usage := h.Usage
		if n.Labels[translate.LabelFakeNode] == "true" {
			usage = corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(0, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(0, resource.BinarySI)}
			for name, q := range podUsage[n.Name] {
				sum := usage[name]
				sum.Add(q)
				usage[name] = sum
			}
		}
		out = append(out, metricsv1beta1.NodeMetrics{
			TypeMeta:   metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: "NodeMetrics"},
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: h.CreationTimestamp},
			Timestamp:  h.Timestamp,
			Window:     h.Window,
			Usage:      usage,
		})
	}
	return out
}

// UsageByNode sums the containers' usage of the virtual pods' metrics
// (PodMetrics' output for pods) per node the pod is scheduled on.
func UsageByNode(pods []corev1.Pod, metrics []metricsv1beta1.PodMetrics) map[string]corev1.ResourceList {
	node := map[string]string{}
	for _, p := range pods {
		node[p.Namespace+"/"+p.Name] = p.Spec.NodeName
	}
	out := map[string]corev1.ResourceList{}
	for _, m := range metrics {
		n := node[m.Namespace+"/"+m.Name]
		if n == "" {
			continue
		}
		if out[n] == nil {
			out[n] = corev1.ResourceList{}
		}
		for _, c := range m.Containers {
			for name, q := range c.Usage {
				sum := out[n][name]
				sum.Add(q)
				out[n][name] = sum
			}
		}
	}
	return out
}
