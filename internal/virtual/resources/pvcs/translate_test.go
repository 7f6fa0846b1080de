package pvcs

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var testTr = translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestHostSpec(t *testing.T) {
	base := func() corev1.PersistentVolumeClaimSpec {
		return corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("standard"),
			VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi"),
			}},
		}
	}
	snapGroup := ptr.To("snapshot.storage.k8s.io")
	tests := []struct {
		name   string
		mutate func(*corev1.PersistentVolumeClaimSpec) // the virtual spec
		expect func(*corev1.PersistentVolumeClaimSpec) // the host spec, from base
	}{
		{
			name:   "volumeName cleared",
			mutate: func(s *corev1.PersistentVolumeClaimSpec) { s.VolumeName = "pv-123" },
			expect: func(*corev1.PersistentVolumeClaimSpec) {},
		},
		{
			name: "dataSource PersistentVolumeClaim renamed",
			mutate: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}
				s.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}
			},
			expect: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src-x-team-x-vc"}
				s.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src-x-team-x-vc"}
			},
		},
		{
			name: "dataSource VolumeSnapshot renamed",
			mutate: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap"}
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap"}
			},
			expect: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap-x-team-x-vc"}
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap-x-team-x-vc"}
			},
		},
		{
			name: "other kinds untouched",
			mutate: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "pop"}
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "pop"}
			},
			expect: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSource = &corev1.TypedLocalObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "pop"}
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "pop"}
			},
		},
		{
			name: "dataSourceRef with explicit namespace untouched",
			mutate: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap", Namespace: ptr.To("other")}
			},
			expect: func(s *corev1.PersistentVolumeClaimSpec) {
				s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: snapGroup, Kind: "VolumeSnapshot", Name: "snap", Namespace: ptr.To("other")}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "team"}, Spec: base()}
			tt.mutate(&v.Spec)
			before := v.DeepCopy()
			want := base()
			tt.expect(&want)
			got := HostSpec(v, Names{Translator: testTr})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("HostSpec() = %s\nwant %s", toJSON(got), toJSON(want))
			}
			if !reflect.DeepEqual(v, before) {
				t.Errorf("HostSpec modified its input: %s", toJSON(v))
			}
		})
	}
}
