package runner_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// With the virtual scheduler (controlPlane.advanced.virtualScheduler) the
// syncer's part: the copies of the host's nodes are the scheduler's nodes
// (the tenant's labels, taints and extended resources stay on them, the
// host's other pods are counted out of allocatable, the API server's
// not-ready taint does not stick), and a pod reaches the host only once
// bound, on its node, without what the host's kubelet would refuse. The
// test binds the pod itself: kube-scheduler is Kubernetes' own.
func TestVirtualSchedulerSyncer(t *testing.T) {
	ns := env.NewNamespace(t)
	node := newHostNode(t, "sched-"+ns, nil)
	// Another host tenant's pod on the node, requesting 500m of CPU.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-" + ns, Namespace: "default"}, Spec: corev1.PodSpec{
		NodeName:    node.Name,
		Tolerations: []corev1.Toleration{{Key: testTaintKey, Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}},
	}}
	create(t, env.HostClient, other)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, other, client.GracePeriodSeconds(0)) })

	cfg := realNodes(func(n *config.SyncNodes) { n.Selector.All = true })
	cfg.ControlPlane.Advanced.VirtualScheduler.Enabled = true
	withConfig(t, cfg)

	var host corev1.Node
	if err := env.HostClient.Get(ctx, client.ObjectKey{Name: node.Name}, &host); err != nil {
		t.Fatal(err)
	}
	hostCPU := host.Status.Allocatable[corev1.ResourceCPU]
	want := hostCPU.DeepCopy()
	want.Sub(resource.MustParse("500m"))
	virtualNode(t, node.Name, func(n *corev1.Node) error {
		if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != testTaintKey {
			return fmt.Errorf("virtual taints %v, want only the host's (not the API server's not-ready)", n.Spec.Taints)
		}
		if got := n.Status.Allocatable[corev1.ResourceCPU]; got.Cmp(want) != 0 {
			return fmt.Errorf("virtual allocatable cpu %s, want the host's %s less the other pod's 500m", got.String(), hostCPU.String())
		}
		return nil
	})

	// The tenant labels and taints the copy and gives it an extended
	// resource; the host changes a label of its own.
	foo := corev1.ResourceName("example.com/foo")
	editNode(t, env.VirtualClient, node.Name, func(n *corev1.Node) {
		n.Labels["e2e"] = "42"
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "tenant", Effect: corev1.TaintEffectNoSchedule})
	})
	testenv.Eventually(t, wait, func() error {
		var n corev1.Node
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: node.Name}, &n); err != nil {
			return err
		}
		n.Status.Capacity[foo], n.Status.Allocatable[foo] = resource.MustParse("5"), resource.MustParse("5")
		return env.VirtualClient.Status().Update(ctx, &n)
	})
	editNode(t, env.HostClient, node.Name, func(n *corev1.Node) { n.Labels["zone"] = "b" })
	virtualNode(t, node.Name, func(n *corev1.Node) error {
		if n.Labels["e2e"] != "42" || n.Labels["zone"] != "b" || len(n.Spec.Taints) != 2 {
			return fmt.Errorf("virtual labels %v taints %v, want the tenant's e2e=42 and taint with the host's zone=b", n.Labels, n.Spec.Taints)
		}
		if q := n.Status.Allocatable[foo]; q.String() != "5" {
			return fmt.Errorf("virtual allocatable %v, want the tenant's %s", n.Status.Allocatable, foo)
		}
		return nil
	})
	if err := env.HostClient.Get(ctx, client.ObjectKey{Name: node.Name}, &host); err != nil {
		t.Fatal(err)
	}
	if host.Labels["e2e"] != "" || len(host.Spec.Taints) != 1 {
		t.Errorf("host node labels %v taints %v: the tenant's edit reached the host", host.Labels, host.Spec.Taints)
	}

	// An unbound pod waits in the virtual cluster.
	create(t, env.VirtualClient, pod("placed", ns, func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"e2e": "42"}
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), foo: resource.MustParse("2")},
			Limits:   corev1.ResourceList{foo: resource.MustParse("2")},
		}
	}))
	neverOnHost(t, &corev1.Pod{}, "placed", ns, 3*time.Second)
	// Bound, it goes to the host node named, without the tenant's
	// selector (the host node lacks e2e=42) or the resource only the copy
	// has.
	var vp corev1.Pod
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "placed"}, &vp); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: vp.Name, Namespace: ns, UID: vp.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := env.VirtualClient.SubResource("binding").Create(ctx, &vp, binding); err != nil {
		t.Fatal(err)
	}
	hp := hostObject(t, &corev1.Pod{}, "placed", ns)
	if hp.Spec.NodeName != node.Name || hp.Spec.NodeSelector["e2e"] != "" {
		t.Errorf("host pod on %q with node selector %v, want %s and no e2e label", hp.Spec.NodeName, hp.Spec.NodeSelector, node.Name)
	}
	r := hp.Spec.Containers[0].Resources
	if _, ok := r.Requests[foo]; ok || r.Requests.Cpu().String() != "100m" {
		t.Errorf("host pod requests %v, want cpu and not %s", r.Requests, foo)
	}
	runningPod(t, "placed", ns)
}
