package runner_test

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// With sync.fromHost ingressClasses, runtimeClasses and priorityClasses on,
// the host's objects of those kinds appear in the virtual cluster, read
// only: a host change is copied, a virtual edit put back, a host deletion
// removes the copy; the tenant's own object of a host object's name is left
// alone.
func TestFromHostClasses(t *testing.T) {
	suffix := env.NewNamespace(t) // a unique suffix for cluster-scoped names
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ic-" + suffix}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc-" + suffix}, Handler: "runc"}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pc-" + suffix, Labels: map[string]string{"tier": "gold"}}, Value: 1000, Description: "host tier"}
	theirs := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "mine-" + suffix}, Value: 5}
	for _, o := range []client.Object{ic, rc, pc, theirs.DeepCopy()} {
		create(t, env.HostClient, o)
		t.Cleanup(func() { _ = env.HostClient.Delete(ctx, o) })
	}
	tenants := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "mine-" + suffix}, Value: 7, Description: "the tenant's"}
	create(t, env.VirtualClient, tenants)
	t.Cleanup(func() { _ = env.VirtualClient.Delete(ctx, tenants) })

	on := config.Default()
	on.Sync.FromHost.IngressClasses.Enabled = true
	on.Sync.FromHost.RuntimeClasses.Enabled = true
	on.Sync.FromHost.PriorityClasses.Enabled = true
	withConfig(t, on)

	copyOf := func(obj client.Object) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			if err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			if obj.GetLabels()[fromhost.Label] != "true" {
				return fmt.Errorf("%s has no %s label", obj.GetName(), fromhost.Label)
			}
			return nil
		})
	}
	vic, vrc, vpc := &networkingv1.IngressClass{ObjectMeta: ic.ObjectMeta}, &nodev1.RuntimeClass{ObjectMeta: rc.ObjectMeta}, &schedulingv1.PriorityClass{ObjectMeta: pc.ObjectMeta}
	copyOf(vic)
	copyOf(vrc)
	copyOf(vpc)
	if vic.Spec.Controller != "example.com/ingress" || vrc.Handler != "runc" || vpc.Value != 1000 || vpc.Labels["tier"] != "gold" {
		t.Errorf("copies: ingress class %+v, runtime class handler %q, priority class %d %v", vic.Spec, vrc.Handler, vpc.Value, vpc.Labels)
	}

	// A host change is copied; a virtual edit is put back.
	if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(pc), pc); err != nil {
		t.Fatal(err)
	}
	pc.Description = "host tier, renamed"
	if err := env.HostClient.Update(ctx, pc); err != nil {
		t.Fatal(err)
	}
	// The syncer may be writing the copy at the same moment: edit as a
	// user would, again on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(vpc), vpc); err != nil {
			return err
		}
		vpc.Labels["tier"] = "tampered"
		return env.VirtualClient.Update(ctx, vpc)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var got schedulingv1.PriorityClass
		if err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(pc), &got); err != nil {
			return err
		}
		if got.Description != "host tier, renamed" || got.Labels["tier"] != "gold" {
			return fmt.Errorf("virtual copy: description %q, labels %v", got.Description, got.Labels)
		}
		return nil
	})

	// The tenant's own object of a host object's name stays as it is.
	var mine schedulingv1.PriorityClass
	if err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(tenants), &mine); err != nil || mine.Value != 7 || mine.Labels[fromhost.Label] != "" {
		t.Errorf("the tenant's PriorityClass: %v %+v", err, mine)
	}

	// The host deletes: the copy goes.
	if err := env.HostClient.Delete(ctx, ic); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(ic), &networkingv1.IngressClass{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("virtual copy of %s still there (%v)", ic.Name, err)
	})
}
