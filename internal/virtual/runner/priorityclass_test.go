package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// sync.toHost.priorityClasses with sync.fromHost.priorityClasses, on real
// API servers: the tenant's class becomes the cluster-scoped host class
// vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER, never a global default; the
// virtual cluster's system classes and its read-only copies of host
// classes are not synced back; a pod naming the tenant's class runs with
// its host copy, one naming a copied host class with that class, one naming
// a system class with none; a description edit follows; switching the kind
// off deletes the host copies.
func TestPriorityClassSync(t *testing.T) {
	ns := env.NewNamespace(t)
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	hostLow := "host-low-" + ns
	create(t, env.HostClient, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: hostLow}, Value: 10})
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: hostLow}})
	})

	cfg := config.Default()
	cfg.Sync.ToHost.PriorityClasses.Enabled = true
	cfg.Sync.FromHost.PriorityClasses.Enabled = true
	withConfig(t, cfg)

	team := "team-high-" + ns
	create(t, env.VirtualClient, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: team},
		Value: 1000, GlobalDefault: true, Description: "the team's"})
	hostName := tr.HostClusterScopedName(team)
	var h schedulingv1.PriorityClass
	testenv.Eventually(t, wait, func() error { return env.HostClient.Get(ctx, client.ObjectKey{Name: hostName}, &h) })
	if h.Value != 1000 || h.GlobalDefault || h.Description != "the team's" {
		t.Errorf("host class %s: value %d globalDefault %v description %q; want 1000, false, the team's", hostName, h.Value, h.GlobalDefault, h.Description)
	}
	if h.Labels[translate.LabelManagedBy] != env.Name || h.Annotations[translate.AnnotationObjectHostNamespace] != env.HostNamespace ||
		h.Annotations[translate.AnnotationObjectName] != team {
		t.Errorf("host class bookkeeping: labels %v annotations %v", h.Labels, h.Annotations)
	}

	// The copy of the host's class is in the virtual cluster and is not
	// synced back; neither is a system class.
	testenv.Eventually(t, wait, func() error {
		return env.VirtualClient.Get(ctx, client.ObjectKey{Name: hostLow}, &schedulingv1.PriorityClass{})
	})
	for _, name := range []string{hostLow, "system-node-critical"} {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Name: tr.HostClusterScopedName(name)}, &schedulingv1.PriorityClass{}); !apierrors.IsNotFound(err) {
			t.Errorf("virtual class %s reached the host (err %v)", name, err)
		}
	}

	// Pods name the host's classes.
	for name, class := range map[string]string{"a": team, "b": hostLow, "c": "system-node-critical"} {
		create(t, env.VirtualClient, pod(name, ns, func(p *corev1.Pod) { p.Spec.PriorityClassName = class }))
	}
	for name, want := range map[string]string{"a": hostName, "b": hostLow, "c": ""} {
		hp := hostObject(t, &corev1.Pod{}, name, ns)
		if hp.Spec.PriorityClassName != want {
			t.Errorf("host pod %s priorityClassName %q, want %q", name, hp.Spec.PriorityClassName, want)
		}
	}

	// An edit follows.
	var v schedulingv1.PriorityClass
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: team}, &v); err != nil {
		t.Fatal(err)
	}
	v.Description = "edited"
	if err := env.VirtualClient.Update(ctx, &v); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Name: hostName}, &h); err != nil {
			return err
		}
		if h.Description != "edited" {
			return fmt.Errorf("host description %q", h.Description)
		}
		return nil
	})

	// Off: the host copy goes, the virtual class stays.
	withConfig(t, config.Default())
	testenv.Eventually(t, wait, func() error {
		err := env.HostClient.Get(ctx, client.ObjectKey{Name: hostName}, &schedulingv1.PriorityClass{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("host class %s still there (err %v)", hostName, err)
	})
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: team}, &v); err != nil {
		t.Errorf("virtual class gone: %v", err)
	}
}
