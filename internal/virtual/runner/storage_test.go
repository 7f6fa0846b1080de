package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/persistentvolumes"
	"github.com/clustersync/clustersync/internal/virtual/resources/storageclasses"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func claim(name, ns, class, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class, VolumeName: volume,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func volume(name, class, path string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName:              class,
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		// Not hostPath: a tenant's hostPath volume is refused at the
		// baseline Pod Security level (TestEscapeAttempts).
		PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: path}},
	}}
}

// virtualClaimBound waits until virtual claim name/ns is Bound and returns it.
func virtualClaimBound(t *testing.T, name, ns string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var c corev1.PersistentVolumeClaim
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName == "" {
			return fmt.Errorf("virtual claim %s: phase %q volume %q", name, c.Status.Phase, c.Spec.VolumeName)
		}
		return nil
	})
	return &c
}

// With persistentVolumes off (the default), a claim the host binds to a
// host volume gets a stand-in virtual volume of that name, bound to it and
// showing no host source; it goes with the claim.
func TestFakePersistentVolumes(t *testing.T) {
	ns := env.NewNamespace(t)
	hostPV := "host-pv-" + ns
	create(t, env.HostClient, volume(hostPV, "manual-"+ns, "/tmp/"+hostPV))
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: hostPV}})
	})
	create(t, env.VirtualClient, claim("data", ns, "manual-"+ns, ""))
	c := virtualClaimBound(t, "data", ns)
	if c.Spec.VolumeName != hostPV {
		t.Errorf("virtual claim volumeName %q, want the host volume %q", c.Spec.VolumeName, hostPV)
	}
	var pv corev1.PersistentVolume
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: hostPV}, &pv); err != nil {
			return err
		}
		if pv.Status.Phase != corev1.VolumeBound {
			return fmt.Errorf("stand-in phase %q", pv.Status.Phase)
		}
		return nil
	})
	if !persistentvolumes.IsFake(&pv) || pv.Spec.HostPath != nil || pv.Spec.ClaimRef == nil ||
		pv.Spec.ClaimRef.Name != "data" || pv.Spec.ClaimRef.Namespace != ns || pv.Spec.ClaimRef.UID != c.UID {
		t.Errorf("stand-in volume %+v", pv)
	}
	if err := env.VirtualClient.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: hostPV}, &corev1.PersistentVolume{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("stand-in volume still there (err %v)", err)
	})
}

// sync.toHost.storageClasses and persistentVolumes: the tenant's class and
// volume become cluster-scoped host objects vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER
// (the class without the default-class annotation, which the virtual class
// keeps); a claim naming both names their host copies on the host, the host
// binds them, and the virtual claim and volume show Bound under their own
// names, with no stand-in. Switched off, the host class is deleted.
func TestStorageClassAndVolumeSync(t *testing.T) {
	ns := env.NewNamespace(t)
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	cfg := config.Default()
	cfg.Sync.ToHost.StorageClasses.Enabled = true
	cfg.Sync.ToHost.PersistentVolumes.Enabled = true
	withConfig(t, cfg)

	class, vol := "fast-"+ns, "vol-"+ns
	create(t, env.VirtualClient, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class,
		Annotations: map[string]string{storageclasses.DefaultClassAnnotation: "true"}},
		Provisioner: "example.com/none", ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain)})
	hostClass := tr.HostClusterScopedName(class)
	var hc storagev1.StorageClass
	testenv.Eventually(t, wait, func() error { return env.HostClient.Get(ctx, client.ObjectKey{Name: hostClass}, &hc) })
	if hc.Provisioner != "example.com/none" || hc.Annotations[storageclasses.DefaultClassAnnotation] != "" {
		t.Errorf("host class provisioner %q annotations %v: want the provisioner and no default-class annotation", hc.Provisioner, hc.Annotations)
	}

	create(t, env.VirtualClient, volume(vol, class, "/tmp/"+vol))
	create(t, env.VirtualClient, claim("data", ns, class, vol))
	hostVol := tr.HostClusterScopedName(vol)
	var hv corev1.PersistentVolume
	testenv.Eventually(t, wait, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Name: hostVol}, &hv); err != nil {
			return err
		}
		if hv.Spec.ClaimRef == nil {
			return fmt.Errorf("host volume %s not bound yet", hostVol)
		}
		return nil
	})
	if hv.Spec.StorageClassName != hostClass || hv.Spec.ClaimRef.Namespace != env.HostNamespace || hv.Spec.ClaimRef.Name != env.HostKey("data", ns).Name {
		t.Errorf("host volume class %q claimRef %+v; want %s and the host claim", hv.Spec.StorageClassName, hv.Spec.ClaimRef, hostClass)
	}
	hc2 := hostObject(t, &corev1.PersistentVolumeClaim{}, "data", ns)
	if hc2.Spec.StorageClassName == nil || *hc2.Spec.StorageClassName != hostClass || hc2.Spec.VolumeName != hostVol {
		t.Errorf("host claim class %v volume %q; want %s and %s", hc2.Spec.StorageClassName, hc2.Spec.VolumeName, hostClass, hostVol)
	}
	c := virtualClaimBound(t, "data", ns)
	if c.Spec.VolumeName != vol {
		t.Errorf("virtual claim volumeName %q, want %q", c.Spec.VolumeName, vol)
	}
	testenv.Eventually(t, wait, func() error {
		var v corev1.PersistentVolume
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: vol}, &v); err != nil {
			return err
		}
		if v.Status.Phase != corev1.VolumeBound || persistentvolumes.IsFake(&v) {
			return fmt.Errorf("virtual volume phase %q fake %v", v.Status.Phase, persistentvolumes.IsFake(&v))
		}
		return nil
	})
	var vc storagev1.StorageClass
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: class}, &vc); err != nil || vc.Annotations[storageclasses.DefaultClassAnnotation] != "true" {
		t.Errorf("virtual class lost its default-class annotation: %v %v", err, vc.Annotations)
	}

	withConfig(t, config.Default())
	testenv.Eventually(t, wait, func() error {
		err := env.HostClient.Get(ctx, client.ObjectKey{Name: hostClass}, &storagev1.StorageClass{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("host class still there (err %v)", err)
	})
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: hostVol}})
	})
}
