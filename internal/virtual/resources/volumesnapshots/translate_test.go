package volumesnapshots

import (
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var tr = translate.Translator{VCluster: "vc", HostNamespace: "host-ns"}

func TestHostSnapshotSpec(t *testing.T) {
	v := &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team"},
		Spec: snapshotv1.VolumeSnapshotSpec{Source: snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")},
			VolumeSnapshotClassName: ptr.To("csi")}}
	spec := HostSnapshotSpec(v, tr)
	if *spec.Source.PersistentVolumeClaimName != tr.HostName("data", "team") || *spec.VolumeSnapshotClassName != "csi" {
		t.Errorf("HostSnapshotSpec = %+v", spec)
	}
	if *v.Spec.Source.PersistentVolumeClaimName != "data" {
		t.Error("input modified")
	}
	v.Spec.Source = snapshotv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To("pre")}
	if got := *HostSnapshotSpec(v, tr).Source.VolumeSnapshotContentName; got != tr.HostClusterScopedName("pre") {
		t.Errorf("content source %q", got)
	}
}

func TestVirtualSnapshotStatus(t *testing.T) {
	if VirtualSnapshotStatus(nil, nil) != nil {
		t.Error("nil status not nil")
	}
	h := &snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To("host-name"), ReadyToUse: ptr.To(true)}
	st := VirtualSnapshotStatus(h, func(n string) string { return "virtual-of-" + n })
	if *st.BoundVolumeSnapshotContentName != "virtual-of-host-name" || !*st.ReadyToUse || *h.BoundVolumeSnapshotContentName != "host-name" {
		t.Errorf("status %+v (host %+v)", st, h)
	}
}

func TestHostContentSpecAndStandIn(t *testing.T) {
	v := &snapshotv1.VolumeSnapshotContent{Spec: snapshotv1.VolumeSnapshotContentSpec{Driver: "d",
		VolumeSnapshotRef: corev1.ObjectReference{Namespace: "team", Name: "s", UID: "u", ResourceVersion: "3"}}}
	r := HostContentSpec(v, tr).VolumeSnapshotRef
	if r.Namespace != "host-ns" || r.Name != tr.HostName("s", "team") || r.UID != "" || r.ResourceVersion != "" || r.Kind != "VolumeSnapshot" {
		t.Errorf("host ref %+v", r)
	}
	h := &snapshotv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-1"},
		Spec: snapshotv1.VolumeSnapshotContentSpec{Driver: "d", DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
			Source: snapshotv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol")}}}
	snap := &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team", UID: "u1"}}
	if StandIn(h, snap) != nil {
		t.Error("a stand-in without the host's snapshot handle")
	}
	h.Status = &snapshotv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true)}
	s := StandIn(h, snap)
	if s == nil || !IsStandIn(s) || s.Name != "snapcontent-1" || *s.Spec.Source.SnapshotHandle != "snap-1" || s.Spec.Source.VolumeHandle != nil ||
		s.Spec.DeletionPolicy != snapshotv1.VolumeSnapshotContentRetain || s.Spec.VolumeSnapshotRef.UID != "u1" || !*s.Status.ReadyToUse {
		t.Errorf("StandIn = %+v", s)
	}
}
