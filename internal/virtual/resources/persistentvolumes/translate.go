// Package persistentvolumes gives the virtual cluster its
// PersistentVolumes, as vCluster does: with sync.toHost.persistentVolumes
// the volumes the tenant creates go to the host as cluster-scoped copies
// vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER, their claim references and
// classes translated; and every claim the host has bound to a volume the
// tenant did not create gets a stand-in virtual volume of that name
// (fake.go), so `kubectl get pv` and the claim's volumeName agree, without
// showing the host volume's source.
package persistentvolumes

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// FakeAnnotation marks a virtual stand-in volume (Fake); the syncer
// deletes it when no claim is bound to it.
const FakeAnnotation = "clustersync.io/fake-volume"

// FakeDriver is the flexVolume driver of a stand-in volume: a volume needs
// a source, and this one names no storage.
const FakeDriver = "clustersync.io/fake"

// IsFake reports whether virtual volume pv is a stand-in made by Fake.
func IsFake(pv *corev1.PersistentVolume) bool { return pv.Annotations[FakeAnnotation] == "true" }

// Bound reports whether virtual claim c is bound on the host: phase Bound
// and a volume name.
func Bound(c *corev1.PersistentVolumeClaim) bool {
	return c.Status.Phase == corev1.ClaimBound && c.Spec.VolumeName != ""
}

// Fake is the virtual stand-in for the host volume bound to virtual claim
// c (Bound): named c.Spec.VolumeName, bound to c, with the claim's
// capacity, access modes, class and volume mode, reclaim policy Retain
// (the host decides what happens to the storage) and no real source.
// Status is phase Bound (written separately: a status subresource).
func Fake(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	modes := c.Status.AccessModes
	if len(modes) == 0 {
		modes = c.Spec.AccessModes
	}
	pv := &corev1.PersistentVolume{}
	pv.Name = c.Spec.VolumeName
	pv.Annotations = map[string]string{FakeAnnotation: "true"}
	pv.Spec = corev1.PersistentVolumeSpec{
		Capacity:                      c.Status.Capacity.DeepCopy(),
		AccessModes:                   append([]corev1.PersistentVolumeAccessMode(nil), modes...),
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		VolumeMode:                    c.Spec.VolumeMode,
		ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: c.Namespace, Name: c.Name, UID: c.UID},
		PersistentVolumeSource: corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: FakeDriver}},
	}
	if c.Spec.StorageClassName != nil {
		pv.Spec.StorageClassName = *c.Spec.StorageClassName
	}
	if len(pv.Spec.Capacity) == 0 {
		pv.Spec.Capacity = c.Spec.Resources.Requests.DeepCopy()
	}
	return pv
}

// HostSpec is the host spec of the tenant's volume v: its claim reference
// names the claim's host copy (uid and resource version dropped: the host
// binder fills them in), its class the host class (hostClass, for a
// non-empty class name).
func HostSpec(v *corev1.PersistentVolume, tr translate.Translator, hostClass func(string) string) corev1.PersistentVolumeSpec {
	spec := *v.Spec.DeepCopy()
	if r := spec.ClaimRef; r != nil && r.Name != "" {
		spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: tr.HostNamespace, Name: tr.HostName(r.Name, r.Namespace)}
	}
	if spec.StorageClassName != "" && hostClass != nil {
		spec.StorageClassName = hostClass(spec.StorageClassName)
	}
	return spec
}
