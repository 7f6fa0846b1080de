package storageclasses

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

func TestHostName(t *testing.T) {
	own := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}
	copied := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard", Labels: map[string]string{fromhost.Label: "true"}}}
	for _, tc := range []struct {
		sc   *storagev1.StorageClass
		on   bool
		want string
	}{
		{own, true, "vcluster-fast-x-h-x-vc"},
		{own, false, "fast"},
		{copied, true, "standard"},
		{copied, false, "standard"},
	} {
		if got := HostName(tc.sc, tc.on, "vcluster-"+tc.sc.Name+"-x-h-x-vc"); got != tc.want {
			t.Errorf("HostName(%s, %v) = %q, want %q", tc.sc.Name, tc.on, got, tc.want)
		}
	}
}

func TestApplyAndImmutable(t *testing.T) {
	v := &storagev1.StorageClass{Provisioner: "rancher.io/local-path", Parameters: map[string]string{"a": "b"},
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain), AllowVolumeExpansion: ptr.To(true),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer), MountOptions: []string{"ro"}}
	h := &storagev1.StorageClass{}
	Apply(h, v)
	if Immutable(h, v) || h.Provisioner != v.Provisioner || !*h.AllowVolumeExpansion || h.MountOptions[0] != "ro" {
		t.Errorf("Apply: %+v", h)
	}
	for name, mutate := range map[string]func(*storagev1.StorageClass){
		"provisioner":  func(s *storagev1.StorageClass) { s.Provisioner = "other" },
		"parameters":   func(s *storagev1.StorageClass) { s.Parameters = map[string]string{"a": "c"} },
		"reclaim":      func(s *storagev1.StorageClass) { s.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete) },
		"binding mode": func(s *storagev1.StorageClass) { s.VolumeBindingMode = nil },
	} {
		changed := v.DeepCopy()
		mutate(changed)
		if !Immutable(h, changed) {
			t.Errorf("%s change not seen as immutable", name)
		}
	}
	expansion := v.DeepCopy()
	expansion.AllowVolumeExpansion = ptr.To(false)
	if Immutable(h, expansion) {
		t.Error("allowVolumeExpansion is mutable")
	}
}
