package runner_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/nodes"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// testTaintKey taints the host nodes the node tests create, so that only
// the pods of the test that made a node (which tolerate it) run there.
const testTaintKey = "clustersync.test/node-test"

// newHostNode creates host node name, played by kwok (Ready, runs pods),
// labelled labels plus kubernetes.io/hostname, tainted testTaintKey=name,
// and deletes it when t ends.
func newHostNode(t *testing.T, name string, labels map[string]string) *corev1.Node {
	t.Helper()
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
	maps.Copy(l, labels)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: testTaintKey, Value: name, Effect: corev1.TaintEffectNoSchedule}}},
	}
	create(t, env.HostClient, n)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, n) })
	return n
}

// podOn is a pod that runs only on host node node (its hostname label and
// its test taint).
func podOn(name, ns, node string) *corev1.Pod {
	return pod(name, ns, func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		p.Spec.Tolerations = []corev1.Toleration{{Key: testTaintKey, Operator: corev1.TolerationOpExists}}
	})
}

// virtualNode waits until the virtual node name is a copy of its host node
// for which ok returns nil, and returns it.
func virtualNode(t *testing.T, name string, ok func(*corev1.Node) error) *corev1.Node {
	t.Helper()
	var n corev1.Node
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		if !nodes.IsCopy(&n) {
			return fmt.Errorf("virtual node %s is not a copy of the host node: labels %v annotations %v", name, n.Labels, n.Annotations)
		}
		if ok != nil {
			return ok(&n)
		}
		return nil
	})
	return &n
}

// virtualNodeGone waits until there is no virtual node name.
func virtualNodeGone(t *testing.T, name string) {
	t.Helper()
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("virtual node %s still there (%v)", name, err)
	})
}

// noVirtualNode fails t when there is a virtual node name.
func noVirtualNode(t *testing.T, name string) {
	t.Helper()
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("virtual node %s: %v, want none", name, err)
	}
}

// editNode changes node name with edit through c, again on a conflict (the
// syncer or kwok may write it at the same moment).
func editNode(t *testing.T, c client.Client, name string, edit func(*corev1.Node)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		edit(&n)
		return c.Update(ctx, &n)
	}); err != nil {
		t.Fatalf("edit node %s: %v", name, err)
	}
}

// nodeTestConfig is the default configuration with the test nodes'
// taint among the enforced tolerations: the isolation rule
// (policies.isolation.tolerations) keeps a tenant's own toleration of it
// off the host pod, as it would a toleration of a host's dedicated nodes,
// unless the host's administrator grants it this way.
func nodeTestConfig() *config.Config {
	cfg := config.Default()
	cfg.Sync.ToHost.Pods.EnforceTolerations = []string{testTaintKey + ":"}
	return cfg
}

func realNodes(mutate func(*config.SyncNodes)) *config.Config {
	cfg := nodeTestConfig()
	cfg.Sync.FromHost.Nodes.Enabled = true
	if mutate != nil {
		mutate(&cfg.Sync.FromHost.Nodes)
	}
	return cfg
}

// With sync.fromHost.nodes.enabled and the default selector, the virtual
// cluster has a copy of each host node that runs one of its pods, and no
// other: the host node's labels, taints, capacity and node info, marked as
// the syncer's. The copy goes when no pod of the tenant runs there any more.
func TestNodesRealDefaultSelector(t *testing.T) {
	ns := env.NewNamespace(t)
	used, unused := newHostNode(t, "used-"+ns, nil), newHostNode(t, "unused-"+ns, nil)
	withConfig(t, realNodes(nil))
	create(t, env.VirtualClient, podOn("web", ns, used.Name))
	if p := runningPod(t, "web", ns); p.Spec.NodeName != used.Name {
		t.Fatalf("pod runs on %s, want %s", p.Spec.NodeName, used.Name)
	}

	var host corev1.Node
	if err := env.HostClient.Get(ctx, client.ObjectKey{Name: used.Name}, &host); err != nil {
		t.Fatal(err)
	}
	// The virtual kube-controller-manager may taint the copy
	// node.kubernetes.io/not-ready between its create and its status
	// update; the syncer then puts the host's taints back.
	v := virtualNode(t, used.Name, func(n *corev1.Node) error {
		if len(n.Status.Conditions) == 0 {
			return fmt.Errorf("virtual node %s has no status yet", n.Name)
		}
		if !reflect.DeepEqual(n.Spec.Taints, host.Spec.Taints) {
			return fmt.Errorf("virtual taints %v, want the host's %v", n.Spec.Taints, host.Spec.Taints)
		}
		return nil
	})
	if !maps.Equal(v.Labels, host.Labels) || v.Labels[translate.LabelFakeNode] != "" {
		t.Errorf("virtual labels %v, want the host's %v", v.Labels, host.Labels)
	}
	vcpu, hcpu := v.Status.Allocatable[corev1.ResourceCPU], host.Status.Allocatable[corev1.ResourceCPU]
	if vcpu.Cmp(hcpu) != 0 || v.Status.NodeInfo != host.Status.NodeInfo {
		t.Errorf("virtual allocatable cpu %s node info %+v, want the host's %s %+v", vcpu.String(), v.Status.NodeInfo, hcpu.String(), host.Status.NodeInfo)
	}
	// Its pod was made before the copy: the other node, which runs no pod
	// of the tenant, has had its chance to appear.
	noVirtualNode(t, unused.Name)

	if err := env.VirtualClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	virtualNodeGone(t, used.Name)
}

// With selector.all every host node is copied, with or without pods; a
// copy goes with its host node.
func TestNodesRealSelectorAll(t *testing.T) {
	ns := env.NewNamespace(t)
	extra := newHostNode(t, "all-"+ns, nil)
	withConfig(t, realNodes(func(n *config.SyncNodes) { n.Selector.All = true }))
	var hosts corev1.NodeList
	if err := env.HostClient.List(ctx, &hosts); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts.Items {
		virtualNode(t, h.Name, nil)
	}
	if err := env.HostClient.Delete(ctx, extra); err != nil {
		t.Fatal(err)
	}
	virtualNodeGone(t, extra.Name)
}

// With selector.labels the virtual nodes are the host nodes carrying those
// labels, and every host pod gets them as node selector, merged with the
// pod's own: the enforced value wins over a pod's value for the same key.
func TestNodesRealSelectorLabels(t *testing.T) {
	ns := env.NewNamespace(t)
	pool := map[string]string{"clustersync.test/pool": ns}
	in := newHostNode(t, "in-"+ns, map[string]string{"clustersync.test/pool": ns, "disk": "ssd"})
	out := newHostNode(t, "out-"+ns, map[string]string{"disk": "ssd"})
	withConfig(t, realNodes(func(n *config.SyncNodes) { n.Selector.Labels = pool }))

	virtualNode(t, in.Name, nil)
	noVirtualNode(t, out.Name)

	create(t, env.VirtualClient, pod("web", ns, func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"disk": "ssd", "clustersync.test/pool": "elsewhere"}
		p.Spec.Tolerations = []corev1.Toleration{{Key: testTaintKey, Operator: corev1.TolerationOpExists}}
	}))
	hp := hostObject(t, &corev1.Pod{}, "web", ns)
	if want := map[string]string{"disk": "ssd", "clustersync.test/pool": ns}; !maps.Equal(hp.Spec.NodeSelector, want) {
		t.Errorf("host pod node selector %v, want %v", hp.Spec.NodeSelector, want)
	}
	if p := runningPod(t, "web", ns); p.Spec.NodeName != in.Name {
		t.Errorf("pod runs on %s, want %s (the only node with the pool label)", p.Spec.NodeName, in.Name)
	}
	var vp corev1.Pod
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &vp); err != nil || vp.Spec.NodeSelector["clustersync.test/pool"] != "elsewhere" {
		t.Errorf("virtual pod node selector %v (%v), want its own", vp.Spec.NodeSelector, err)
	}

	// A host node that gets the labels is copied; losing them, it goes.
	editNode(t, env.HostClient, out.Name, func(n *corev1.Node) { maps.Copy(n.Labels, pool) })
	virtualNode(t, out.Name, nil)
	editNode(t, env.HostClient, out.Name, func(n *corev1.Node) { delete(n.Labels, "clustersync.test/pool") })
	virtualNodeGone(t, out.Name)
}

// clearImageStatus empties status.images of the copies; off, the host's
// image list is copied.
func TestNodesRealClearImageStatus(t *testing.T) {
	for _, clear := range []bool{false, true} {
		t.Run(fmt.Sprintf("clearImageStatus=%v", clear), func(t *testing.T) {
			ns := env.NewNamespace(t)
			pool := map[string]string{"clustersync.test/pool": ns}
			n := newHostNode(t, "img-"+ns, pool)
			images := []corev1.ContainerImage{{Names: []string{"registry.example.com/app@sha256:0123", "registry.example.com/app:1.0"}, SizeBytes: 12345}}
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var h corev1.Node
				if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(n), &h); err != nil {
					return err
				}
				h.Status.Images = images
				return env.HostClient.Status().Update(ctx, &h)
			}); err != nil {
				t.Fatal(err)
			}
			withConfig(t, realNodes(func(c *config.SyncNodes) { c.Selector.Labels, c.ClearImageStatus = pool, clear }))
			virtualNode(t, n.Name, func(v *corev1.Node) error {
				if len(v.Status.Conditions) == 0 {
					return fmt.Errorf("virtual node %s has no status yet", v.Name)
				}
				var h corev1.Node
				if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(n), &h); err != nil {
					return err
				}
				if len(h.Status.Images) == 0 {
					return fmt.Errorf("host node %s lost its images (kwok rewrote its status?)", h.Name)
				}
				want := images
				if clear {
					want = nil
				}
				if !reflect.DeepEqual(v.Status.Images, want) {
					return fmt.Errorf("virtual images %v, want %v", v.Status.Images, want)
				}
				return nil
			})
		})
	}
}

// syncBackChanges on: labels and taints edited on the virtual node reach
// the host node, and the host's own changes still reach the virtual node.
// Off: a virtual edit is put back to the host's value and never reaches the
// host node.
func TestNodesRealSyncBackChanges(t *testing.T) {
	editTaint := corev1.Taint{Key: "tenant-taint", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule}
	hasTaint := func(n *corev1.Node) bool {
		return slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.MatchTaint(&editTaint) && x.Value == editTaint.Value })
	}
	hostNodeOf := func(t *testing.T, name string) *corev1.Node {
		t.Helper()
		var h corev1.Node
		if err := env.HostClient.Get(ctx, client.ObjectKey{Name: name}, &h); err != nil {
			t.Fatal(err)
		}
		return &h
	}

	t.Run("on", func(t *testing.T) {
		ns := env.NewNamespace(t)
		pool := map[string]string{"clustersync.test/pool": ns}
		n := newHostNode(t, "back-"+ns, pool)
		withConfig(t, realNodes(func(c *config.SyncNodes) { c.Selector.Labels, c.SyncBackChanges = pool, true }))
		virtualNode(t, n.Name, nil)

		editNode(t, env.VirtualClient, n.Name, func(v *corev1.Node) {
			v.Labels["tenant-label"] = "set-in-virtual"
			v.Spec.Taints = append(v.Spec.Taints, editTaint)
		})
		testenv.Eventually(t, wait, func() error {
			h := hostNodeOf(t, n.Name)
			if h.Labels["tenant-label"] != "set-in-virtual" || !hasTaint(h) {
				return fmt.Errorf("host node labels %v taints %v, want the virtual edits", h.Labels, h.Spec.Taints)
			}
			return nil
		})

		// The host's change reaches the virtual node and keeps the tenant's.
		editNode(t, env.HostClient, n.Name, func(h *corev1.Node) { h.Labels["host-label"] = "set-on-host" })
		virtualNode(t, n.Name, func(v *corev1.Node) error {
			if v.Labels["host-label"] != "set-on-host" || v.Labels["tenant-label"] != "set-in-virtual" || !hasTaint(v) {
				return fmt.Errorf("virtual labels %v taints %v", v.Labels, v.Spec.Taints)
			}
			return nil
		})

		// A label removed in the virtual cluster goes from the host too.
		editNode(t, env.VirtualClient, n.Name, func(v *corev1.Node) { delete(v.Labels, "tenant-label") })
		testenv.Eventually(t, wait, func() error {
			if h := hostNodeOf(t, n.Name); h.Labels["tenant-label"] != "" || h.Labels["host-label"] != "set-on-host" || !hasTaint(h) {
				return fmt.Errorf("host node labels %v taints %v", h.Labels, h.Spec.Taints)
			}
			return nil
		})
	})

	t.Run("off", func(t *testing.T) {
		ns := env.NewNamespace(t)
		pool := map[string]string{"clustersync.test/pool": ns}
		n := newHostNode(t, "noback-"+ns, pool)
		withConfig(t, realNodes(func(c *config.SyncNodes) { c.Selector.Labels = pool }))
		virtualNode(t, n.Name, nil)
		before := hostNodeOf(t, n.Name)

		editNode(t, env.VirtualClient, n.Name, func(v *corev1.Node) {
			v.Labels["tenant-label"] = "set-in-virtual"
			v.Spec.Taints = append(v.Spec.Taints, editTaint)
		})
		// The syncer puts the host's labels and taints back on the virtual
		// node: it has reconciled the edit.
		virtualNode(t, n.Name, func(v *corev1.Node) error {
			if _, ok := v.Labels["tenant-label"]; ok || hasTaint(v) {
				return fmt.Errorf("virtual node still has the edit: labels %v taints %v", v.Labels, v.Spec.Taints)
			}
			return nil
		})
		after := hostNodeOf(t, n.Name)
		if !maps.Equal(after.Labels, before.Labels) || !reflect.DeepEqual(after.Spec.Taints, before.Spec.Taints) {
			t.Errorf("host node changed: labels %v taints %v, were %v %v", after.Labels, after.Spec.Taints, before.Labels, before.Spec.Taints)
		}
	})
}

// A fake node becomes the copy of its host node when real nodes are
// switched on, and a copy becomes a fake node when they are switched off,
// in place: the pod bound to it keeps running and is never deleted.
func TestNodesRealAndFakeSwitch(t *testing.T) {
	ns := env.NewNamespace(t)
	n := newHostNode(t, "switch-"+ns, nil)
	withConfig(t, nodeTestConfig())
	create(t, env.VirtualClient, podOn("web", ns, n.Name))
	p := runningPod(t, "web", ns)
	fake := func(v *corev1.Node) error {
		if !nodes.IsFake(v) || nodes.IsCopy(v) {
			return fmt.Errorf("virtual node %s: labels %v annotations %v, want a fake node", v.Name, v.Labels, v.Annotations)
		}
		return nil
	}
	var v corev1.Node
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: n.Name}, &v); err != nil || fake(&v) != nil {
		t.Fatalf("with the defaults: %v %v", err, fake(&v))
	}

	withConfig(t, realNodes(nil))
	copied := virtualNode(t, n.Name, func(v *corev1.Node) error {
		if nodes.IsFake(v) || v.Labels["type"] != "kwok" {
			return fmt.Errorf("virtual node %s labels %v, want the host's", v.Name, v.Labels)
		}
		return nil
	})
	if copied.UID != v.UID {
		t.Errorf("the fake node was replaced (UID %s, was %s), not changed in place", copied.UID, v.UID)
	}

	if err := env.StopSyncer(); err != nil {
		t.Fatal(err)
	}
	if err := env.StartSyncer(nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: n.Name}, &v); err != nil {
			return err
		}
		return fake(&v)
	})
	if v.UID != copied.UID {
		t.Errorf("the copy was replaced (UID %s, was %s), not changed in place", v.UID, copied.UID)
	}
	if again := runningPod(t, "web", ns); again.UID != p.UID || again.Spec.NodeName != n.Name {
		t.Errorf("pod %s on %s, want the same pod (%s) on %s", again.UID, again.Spec.NodeName, p.UID, n.Name)
	}
}
