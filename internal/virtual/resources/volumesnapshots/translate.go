// Package volumesnapshots syncs CSI volume snapshots
// (snapshot.storage.k8s.io/v1, the CRDs of
// https://github.com/kubernetes-csi/external-snapshotter) as vCluster's
// sync.toHost.volumeSnapshots does: the tenant's VolumeSnapshots go to the
// host namespace, its pre-provisioned VolumeSnapshotContents to the host as
// cluster-scoped copies vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER; the host's
// snapshot controller and CSI driver do the work, and the status comes
// back. A content the host makes for a snapshot (dynamic provisioning)
// appears in the virtual cluster as a stand-in of the same name, bound to
// the virtual snapshot. The CRDs are copied from the host at start, and the
// host's VolumeSnapshotClasses are shown read-only.
package volumesnapshots

import (
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// CRDs are the definitions copied from the host into the virtual cluster.
func CRDs() []string {
	return []string{"volumesnapshots.snapshot.storage.k8s.io", "volumesnapshotcontents.snapshot.storage.k8s.io",
		"volumesnapshotclasses.snapshot.storage.k8s.io"}
}

// StandInAnnotation marks a virtual VolumeSnapshotContent that stands for
// a content the host made (StandIn).
const StandInAnnotation = "clustersync.io/stand-in"

// IsStandIn reports whether virtual content c was made by StandIn.
func IsStandIn(c *snapshotv1.VolumeSnapshotContent) bool {
	return c.Annotations[StandInAnnotation] == "true"
}

// HostSnapshotSpec is the host spec of virtual snapshot v: the claim it
// snapshots is the claim's host copy, a pre-provisioned content the host
// copy of the tenant's content; the class is kept (a host class).
func HostSnapshotSpec(v *snapshotv1.VolumeSnapshot, tr translate.Translator) snapshotv1.VolumeSnapshotSpec {
	spec := *v.Spec.DeepCopy()
	if n := spec.Source.PersistentVolumeClaimName; n != nil {
		host := tr.HostName(*n, v.Namespace)
		spec.Source.PersistentVolumeClaimName = &host
	}
	if n := spec.Source.VolumeSnapshotContentName; n != nil {
		host := tr.HostClusterScopedName(*n)
		spec.Source.VolumeSnapshotContentName = &host
	}
	return spec
}

// VirtualSnapshotStatus is the virtual status from the host copy's status
// h: the bound content under its virtual name (virtualContent maps a host
// content name: the tenant's content, or the stand-in of the host's).
func VirtualSnapshotStatus(h *snapshotv1.VolumeSnapshotStatus, virtualContent func(string) string) *snapshotv1.VolumeSnapshotStatus {
	if h == nil {
		return nil
	}
	st := h.DeepCopy()
	if n := st.BoundVolumeSnapshotContentName; n != nil {
		v := virtualContent(*n)
		st.BoundVolumeSnapshotContentName = &v
	}
	return st
}

// HostContentSpec is the host spec of the tenant's pre-provisioned content
// v: its snapshot reference names the host copy of the virtual snapshot
// (uid and resource version dropped: the host's controller fills them in).
func HostContentSpec(v *snapshotv1.VolumeSnapshotContent, tr translate.Translator) snapshotv1.VolumeSnapshotContentSpec {
	spec := *v.Spec.DeepCopy()
	if r := v.Spec.VolumeSnapshotRef; r.Name != "" {
		spec.VolumeSnapshotRef = corev1.ObjectReference{Kind: "VolumeSnapshot", APIVersion: snapshotv1.SchemeGroupVersion.String(),
			Namespace: tr.HostNamespace, Name: tr.HostName(r.Name, r.Namespace)}
	}
	return spec
}

// StandIn is the virtual stand-in for host content h, which the host made
// for virtual snapshot snap: the same name, bound to snap, the host's
// driver and class, deletion policy Retain (the host's content decides
// what happens to the snapshot), the snapshot handle the host reports as
// its source; nil while the host reports none. Its status (written
// separately) is the host content's.
func StandIn(h *snapshotv1.VolumeSnapshotContent, snap *snapshotv1.VolumeSnapshot) *snapshotv1.VolumeSnapshotContent {
	if h.Status == nil || h.Status.SnapshotHandle == nil || *h.Status.SnapshotHandle == "" {
		return nil
	}
	handle := *h.Status.SnapshotHandle
	out := &snapshotv1.VolumeSnapshotContent{}
	out.Name = h.Name
	out.Annotations = map[string]string{StandInAnnotation: "true"}
	out.Spec = snapshotv1.VolumeSnapshotContentSpec{
		VolumeSnapshotRef: corev1.ObjectReference{Kind: "VolumeSnapshot", APIVersion: snapshotv1.SchemeGroupVersion.String(),
			Namespace: snap.Namespace, Name: snap.Name, UID: snap.UID},
		DeletionPolicy:          snapshotv1.VolumeSnapshotContentRetain,
		Driver:                  h.Spec.Driver,
		VolumeSnapshotClassName: h.Spec.VolumeSnapshotClassName,
		Source:                  snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: &handle},
		SourceVolumeMode:        h.Spec.SourceVolumeMode,
	}
	out.Status = h.Status.DeepCopy()
	return out
}
