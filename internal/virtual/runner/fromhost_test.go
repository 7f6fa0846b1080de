package runner_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/translate"
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

// neverInVirtual checks for d that no cluster-scoped virtual object of
// obj's kind named one of names appears (a negative check: it gives the
// syncer time to act wrongly).
func neverInVirtual(t *testing.T, obj client.Object, d time.Duration, names ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, name := range names {
			if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: name}, obj); err == nil {
				t.Fatalf("virtual %T %s exists, want it not copied", obj, name)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sync.fromHost storageClasses, csiNodes and csiDrivers: "auto" (the
// default: no virtual scheduler) and false copy nothing; true keeps
// read-only copies labelled clustersync.io/from-host=true, but not of the
// host classes that are virtual clusters' copies (this tenant's own class,
// synced with sync.toHost.storageClasses, or another cluster's); a host
// object replaced while the syncer was away (its immutable fields changed)
// replaces its copy.
func TestFromHostStorage(t *testing.T) {
	suffix := env.NewNamespace(t) // a unique suffix for cluster-scoped names
	driver := "csi-" + suffix + ".example.com"
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc-" + suffix, Labels: map[string]string{"tier": "fast"}},
		Provisioner: driver, Parameters: map[string]string{"type": "ssd"}, VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}
	csiDriver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-" + suffix},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "node-1"}}}}
	for _, o := range []client.Object{sc, csiDriver, csiNode} {
		create(t, env.HostClient, o)
		t.Cleanup(func() { _ = env.HostClient.Delete(ctx, o) })
	}
	// The syncer runs with the defaults ("auto"): no copies.
	neverInVirtual(t, &storagev1.StorageClass{}, 3*time.Second, sc.Name)
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: driver}, &storagev1.CSIDriver{}); !apierrors.IsNotFound(err) {
		t.Errorf("auto: virtual CSIDriver: %v, want not found", err)
	}
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: csiNode.Name}, &storagev1.CSINode{}); !apierrors.IsNotFound(err) {
		t.Errorf("auto: virtual CSINode: %v, want not found", err)
	}

	on := config.Default()
	on.Sync.FromHost.StorageClasses.Enabled = config.AutoSwitchOn
	on.Sync.FromHost.CSINodes.Enabled = config.AutoSwitchOn
	on.Sync.FromHost.CSIDrivers.Enabled = config.AutoSwitchOn
	on.Sync.ToHost.StorageClasses.Enabled = true
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
	vsc, vdriver, vnode := &storagev1.StorageClass{ObjectMeta: sc.ObjectMeta}, &storagev1.CSIDriver{ObjectMeta: csiDriver.ObjectMeta}, &storagev1.CSINode{ObjectMeta: csiNode.ObjectMeta}
	copyOf(vsc)
	copyOf(vdriver)
	copyOf(vnode)
	if vsc.Provisioner != driver || vsc.Parameters["type"] != "ssd" || vsc.Labels["tier"] != "fast" ||
		vsc.VolumeBindingMode == nil || *vsc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("StorageClass copy: %+v", vsc)
	}
	if vdriver.Spec.AttachRequired == nil || *vdriver.Spec.AttachRequired {
		t.Errorf("CSIDriver copy: %+v", vdriver.Spec)
	}
	if len(vnode.Spec.Drivers) != 1 || vnode.Spec.Drivers[0].Name != driver || vnode.Spec.Drivers[0].NodeID != "node-1" {
		t.Errorf("CSINode copy: %+v", vnode.Spec)
	}

	// The host copy of the tenant's own class, and another virtual
	// cluster's copy, are no host classes: they are not copied.
	mine := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "mine-" + suffix}, Provisioner: driver}
	create(t, env.VirtualClient, mine)
	t.Cleanup(func() { _ = env.VirtualClient.Delete(ctx, mine) })
	mineOnHost := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}.HostClusterScopedName(mine.Name)
	testenv.Eventually(t, wait, func() error {
		return env.HostClient.Get(ctx, client.ObjectKey{Name: mineOnHost}, &storagev1.StorageClass{})
	})
	theirs := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "theirs-" + suffix,
		Labels: map[string]string{translate.LabelManagedBy: "other"}}, Provisioner: driver}
	create(t, env.HostClient, theirs)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, theirs) })
	neverInVirtual(t, &storagev1.StorageClass{}, 3*time.Second, mineOnHost, theirs.Name)

	// Replaced on the host while the syncer is stopped, with another
	// provisioner (immutable): the copy is replaced.
	if err := env.StopSyncer(); err != nil {
		t.Fatal(err)
	}
	if err := env.HostClient.Delete(ctx, sc); err != nil {
		t.Fatal(err)
	}
	replaced := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: sc.Name}, Provisioner: "other." + driver}
	create(t, env.HostClient, replaced)
	if err := env.StartSyncer(on); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var got storagev1.StorageClass
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: sc.Name}, &got); err != nil {
			return err
		}
		if got.Provisioner != replaced.Provisioner || got.Labels[fromhost.Label] != "true" || got.Parameters != nil {
			return fmt.Errorf("virtual copy: provisioner %q, labels %v, parameters %v", got.Provisioner, got.Labels, got.Parameters)
		}
		return nil
	})

	// false: nothing new is copied.
	off := config.Default()
	off.Sync.FromHost.StorageClasses.Enabled = config.AutoSwitchOff
	off.Sync.FromHost.CSIDrivers.Enabled = config.AutoSwitchOff
	withConfig(t, off)
	later := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "later-" + suffix}, Provisioner: driver}
	create(t, env.HostClient, later)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, later) })
	neverInVirtual(t, &storagev1.StorageClass{}, 3*time.Second, later.Name)
}

// sync.fromHost.csiStorageCapacities: true copies the CSIStorageCapacities
// a driver publishes in any host namespace into the virtual kube-system as
// NAME-x-HOSTNAMESPACE, read-only; a host change follows, a host deletion
// removes the copy. With the default ("auto") nothing is copied.
func TestFromHostCSIStorageCapacities(t *testing.T) {
	drivers := "drivers-" + env.NewNamespace(t)
	create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: drivers}})
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: drivers}})
	})
	capacity := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "cap", Namespace: drivers},
		StorageClassName: "standard", Capacity: ptr.To(resource.MustParse("10Gi"))}
	create(t, env.HostClient, capacity)
	copyKey := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: translate.SafeConcatName("cap", "x", drivers)}
	if err := env.VirtualClient.Get(ctx, copyKey, &storagev1.CSIStorageCapacity{}); !apierrors.IsNotFound(err) {
		t.Errorf("auto: virtual copy %s: %v, want not found", copyKey, err)
	}

	on := config.Default()
	on.Sync.FromHost.CSIStorageCapacities.Enabled = config.AutoSwitchOn
	withConfig(t, on)
	wantCapacity := func(want string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			var v storagev1.CSIStorageCapacity
			if err := env.VirtualClient.Get(ctx, copyKey, &v); err != nil {
				return err
			}
			if v.Capacity == nil || v.Capacity.String() != want || v.StorageClassName != "standard" || v.Labels[fromhost.Label] != "true" {
				return fmt.Errorf("virtual copy: capacity %v class %q labels %v; want %s", v.Capacity, v.StorageClassName, v.Labels, want)
			}
			return nil
		})
	}
	wantCapacity("10Gi")
	if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(capacity), capacity); err != nil {
		t.Fatal(err)
	}
	capacity.Capacity = ptr.To(resource.MustParse("4Gi"))
	if err := env.HostClient.Update(ctx, capacity); err != nil {
		t.Fatal(err)
	}
	wantCapacity("4Gi")
	if err := env.HostClient.Delete(ctx, capacity); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, copyKey, &storagev1.CSIStorageCapacity{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("virtual copy still there (err %v)", err)
	})
}
