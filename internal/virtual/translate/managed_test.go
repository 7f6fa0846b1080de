package translate

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsManaged(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	const kind = "/v1, Kind=Secret"
	good := func() *metav1.ObjectMeta {
		ann := tr.BookkeepingAnnotations(VirtualRef{Kind: kind, Name: "s", Namespace: "default", UID: "u1"}, "s-x-default-x-vc")
		return &metav1.ObjectMeta{
			Name: "s-x-default-x-vc", Namespace: "vc-host",
			Labels:      map[string]string{LabelManagedBy: "vc", LabelNamespace: "default"},
			Annotations: ann,
		}
	}
	tests := []struct {
		name   string
		mutate func(*metav1.ObjectMeta)
		kind   string
		want   bool
	}{
		{"all bookkeeping present", func(*metav1.ObjectMeta) {}, kind, true},
		{"other namespace", func(m *metav1.ObjectMeta) { m.Namespace = "elsewhere" }, kind, false},
		{"no managed-by label", func(m *metav1.ObjectMeta) { delete(m.Labels, LabelManagedBy) }, kind, false},
		{"managed by another vcluster", func(m *metav1.ObjectMeta) { m.Labels[LabelManagedBy] = "other" }, kind, false},
		{"no object-name", func(m *metav1.ObjectMeta) { delete(m.Annotations, AnnotationObjectName) }, kind, false},
		{"name does not match translation", func(m *metav1.ObjectMeta) { m.Annotations[AnnotationObjectName] = "t" }, kind, false},
		{"kind differs", func(*metav1.ObjectMeta) {}, "/v1, Kind=ConfigMap", false},
		{"host-name differs", func(m *metav1.ObjectMeta) { m.Annotations[AnnotationObjectHostName] = "x" }, kind, false},
		{"host-namespace differs", func(m *metav1.ObjectMeta) { m.Annotations[AnnotationObjectHostNamespace] = "x" }, kind, false},
		{"optional annotations absent", func(m *metav1.ObjectMeta) {
			delete(m.Annotations, AnnotationObjectKind)
			delete(m.Annotations, AnnotationObjectHostName)
			delete(m.Annotations, AnnotationObjectHostNamespace)
		}, kind, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.mutate(m)
			if got := tr.IsManaged(m, tt.kind, nil); got != tt.want {
				t.Fatalf("IsManaged = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("cluster-scoped, other host namespace", func(t *testing.T) {
		// vc in host namespace "c" names virtual object "a-x-b"
		// vcluster-a-x-b-x-c-x-vc, as vc in host namespace "b-x-c" names
		// "a": only the host-namespace annotation tells them apart.
		other := Translator{VCluster: "vc", HostNamespace: "b-x-c"}
		mine := Translator{VCluster: "vc", HostNamespace: "c"}
		name := other.HostClusterScopedName("a")
		if name != mine.HostClusterScopedName("a-x-b") {
			t.Fatalf("the example does not collide: %s", name)
		}
		ref := VirtualRef{Kind: "scheduling.k8s.io/v1, Kind=PriorityClass", Name: "a"}
		m := &metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelManagedBy: "vc"},
			Annotations: other.BookkeepingAnnotations(ref, name)}
		// The name check alone would take it for mine if the annotation
		// said "a-x-b"; the host-namespace annotation still refuses it.
		m.Annotations[AnnotationObjectName] = "a-x-b"
		if mine.IsManaged(m, ref.Kind, func(n, _ string) string { return mine.HostClusterScopedName(n) }) {
			t.Fatal("a cluster-scoped copy of another host namespace's virtual cluster counts as managed")
		}
	})
	t.Run("custom host name", func(t *testing.T) {
		m := good()
		m.Name = "vc"
		m.Annotations[AnnotationObjectHostName] = "vc"
		special := func(name, ns string) string { return "vc" }
		if !tr.IsManaged(m, kind, special) {
			t.Fatal("IsManaged with a custom host name func = false")
		}
	})
}

func TestManagedKeys(t *testing.T) {
	v := ManagedKeysValue(map[string]string{"b": "", "a": ""})
	if v != "a\nb" {
		t.Fatalf("ManagedKeysValue = %q", v)
	}
	got := ParseManagedKeys(v)
	if len(got) != 2 || !got["a"] || !got["b"] {
		t.Fatalf("ParseManagedKeys = %v", got)
	}
	if len(ParseManagedKeys("")) != 0 {
		t.Fatal("ParseManagedKeys(\"\") is not empty")
	}
}
