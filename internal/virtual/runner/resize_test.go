package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// An in-place resize of a virtual pod (its resize subresource) reaches the
// host pod through the host's resize subresource, and the host pod records
// the resources it got (translate.AnnotationPodResources).
func TestPodResize(t *testing.T) {
	ns := env.NewNamespace(t)
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)},
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
	}
	// Pending on purpose (no node has the label): the API server refuses
	// to resize a running pod whose container statuses lack resources,
	// which kwok's do (a real kubelet's have them).
	create(t, env.VirtualClient, pod("resized", ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = cpu("100m")
		p.Spec.NodeSelector = map[string]string{"clustersync.io/test": "no-node"}
	}))
	hostObject(t, &corev1.Pod{}, "resized", ns)
	var v corev1.Pod
	// The syncer writes the virtual pod too (its status, its node).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "resized"}, &v); err != nil {
			return err
		}
		v.Spec.Containers[0].Resources = cpu("200m")
		return env.VirtualClient.SubResource("resize").Update(ctx, &v)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var h corev1.Pod
		if err := env.HostClient.Get(ctx, env.HostKey("resized", ns), &h); err != nil {
			return err
		}
		if got := h.Spec.Containers[0].Resources.Limits.Cpu().String(); got != "200m" {
			return fmt.Errorf("host pod cpu limit %s, want 200m", got)
		}
		if h.Annotations[translate.AnnotationPodResources] != pods.ResourcesHash(&v) {
			return fmt.Errorf("host pod %s %q, want %q", translate.AnnotationPodResources, h.Annotations[translate.AnnotationPodResources], pods.ResourcesHash(&v))
		}
		return nil
	})
}
