package persistentvolumes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func TestFake(t *testing.T) {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "team", UID: "u1"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-123", StorageClassName: ptr.To("standard"),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}}
	if !Bound(c) {
		t.Fatal("Bound = false")
	}
	pv := Fake(c)
	if pv.Name != "pvc-123" || !IsFake(pv) || pv.Spec.StorageClassName != "standard" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain ||
		pv.Spec.FlexVolume == nil || pv.Spec.FlexVolume.Driver != FakeDriver {
		t.Errorf("Fake = %+v", pv)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("capacity %s, want the claim's status capacity 2Gi", q.String())
	}
	if r := pv.Spec.ClaimRef; r == nil || r.Namespace != "team" || r.Name != "data" || r.UID != "u1" {
		t.Errorf("claimRef %+v", r)
	}
	if len(pv.Spec.AccessModes) != 1 {
		t.Errorf("access modes %v", pv.Spec.AccessModes)
	}
	c.Status.Capacity = nil
	if q := Fake(c).Spec.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("capacity without status %s, want the request", q.String())
	}
	c.Status.Phase = corev1.ClaimPending
	if Bound(c) {
		t.Error("a pending claim is Bound")
	}
}

func TestHostSpec(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "host-ns"}
	v := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{StorageClassName: "fast",
		ClaimRef:               &corev1.ObjectReference{Namespace: "team", Name: "data", UID: "u1", ResourceVersion: "9"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
	spec := HostSpec(v, tr, func(n string) string { return "host-" + n })
	if spec.StorageClassName != "host-fast" || spec.HostPath.Path != "/data" {
		t.Errorf("HostSpec = %+v", spec)
	}
	want := corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "host-ns", Name: tr.HostName("data", "team")}
	if *spec.ClaimRef != want {
		t.Errorf("claimRef %+v, want %+v", *spec.ClaimRef, want)
	}
	if v.Spec.ClaimRef.Namespace != "team" || v.Spec.StorageClassName != "fast" {
		t.Error("HostSpec modified its input")
	}
	v.Spec.ClaimRef, v.Spec.StorageClassName = nil, ""
	if spec := HostSpec(v, tr, nil); spec.ClaimRef != nil || spec.StorageClassName != "" {
		t.Errorf("HostSpec without claim and class = %+v", spec)
	}
}
