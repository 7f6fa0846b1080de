package translate

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewHostMetadata(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	v := &metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "u1",
		Labels:      map[string]string{"app": "web", "release": "r"},
		Annotations: map[string]string{"note": "x", AnnotationObjectName: "forged"},
	}
	ref := VirtualRef{Kind: "/v1, Kind=Secret", Name: "s", Namespace: "ns", UID: "u1"}
	labels, ann, seen := tr.NewHostMetadata(v, ref, "s-x-ns-x-vc")
	wantLabels := map[string]string{"app": "web", tr.HostLabelKey("release"): "r", LabelManagedBy: "vc", LabelNamespace: "ns"}
	if !maps.Equal(labels, wantLabels) {
		t.Errorf("labels = %v, want %v", labels, wantLabels)
	}
	if ann[AnnotationObjectName] != "s" || ann["note"] != "x" || ann[AnnotationObjectUID] != "u1" ||
		ann[AnnotationManagedAnnotations] != "note" || ann[AnnotationManagedLabels] != "app\nrelease" {
		t.Errorf("annotations = %v", ann)
	}
	if !maps.Equal(seen.Labels.Virtual, v.Labels) || seen.Annotations.Virtual["note"] != "x" {
		t.Errorf("seen = %+v", seen)
	}
}

func TestSyncMetadata(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	ref := VirtualRef{Kind: "/v1, Kind=Pod", Name: "p", Namespace: "ns", UID: "u1"}
	v := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "1"}}
	hl, ha, seen := tr.NewHostMetadata(v, ref, "p-x-ns-x-vc")
	// A host controller adds a label and an annotation; the syncer's own pod
	// annotation and a namespace label are on the host too.
	hl["host.io/zone"] = "z1"
	hl[tr.NamespaceLabelKey("team")] = "a"
	ha["host.io/scraped"] = "yes"
	ha[AnnotationPodName] = "p"
	h := &metav1.ObjectMeta{Labels: hl, Annotations: ha}

	t.Run("host additions flow back, system keys stay on host", func(t *testing.T) {
		r := tr.SyncMetadata(&seen, v, h, ref, "p-x-ns-x-vc")
		if r.VirtualLabels["host.io/zone"] != "z1" || r.VirtualAnnotations["host.io/scraped"] != "yes" {
			t.Errorf("host changes did not reach virtual: %v %v", r.VirtualLabels, r.VirtualAnnotations)
		}
		if _, ok := r.VirtualAnnotations[AnnotationPodName]; ok {
			t.Error("system annotation flowed to virtual")
		}
		if r.HostLabels[tr.NamespaceLabelKey("team")] != "a" || r.HostAnnotations[AnnotationPodName] != "p" {
			t.Errorf("host-only keys lost: %v %v", r.HostLabels, r.HostAnnotations)
		}
		if r.HostLabels[LabelManagedBy] != "vc" || r.HostAnnotations[AnnotationObjectUID] != "u1" {
			t.Errorf("bookkeeping lost: %v %v", r.HostLabels, r.HostAnnotations)
		}
	})
	t.Run("without base, host-only keys survive on host only", func(t *testing.T) {
		r := tr.SyncMetadata(nil, v, h, ref, "p-x-ns-x-vc")
		if _, ok := r.VirtualLabels["host.io/zone"]; ok {
			t.Error("host-only label copied to virtual without a base")
		}
		if r.HostLabels["host.io/zone"] != "z1" || r.HostAnnotations["host.io/scraped"] != "yes" {
			t.Errorf("host-only keys removed: %v %v", r.HostLabels, r.HostAnnotations)
		}
	})
	t.Run("label removed in virtual while syncer was down is removed from host", func(t *testing.T) {
		v2 := &metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}}
		r := tr.SyncMetadata(nil, v2, h, ref, "p-x-ns-x-vc")
		if _, ok := r.HostLabels["app"]; ok {
			t.Errorf("managed label kept on host: %v", r.HostLabels)
		}
		if _, ok := r.HostAnnotations["a"]; ok {
			t.Errorf("managed annotation kept on host: %v", r.HostAnnotations)
		}
		if _, ok := r.HostAnnotations[AnnotationManagedAnnotations]; ok {
			t.Errorf("empty managed-annotations kept: %v", r.HostAnnotations)
		}
	})
}

// A virtual annotation with a syncer prefix (force-sync) is copied to the
// host and must stay on the virtual object over repeated syncs.
func TestSyncMetadataKeepsPrefixedVirtualAnnotation(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	ref := VirtualRef{Kind: "/v1, Kind=Secret", Name: "s", Namespace: "ns", UID: "u1"}
	v := &metav1.ObjectMeta{Annotations: map[string]string{AnnotationForceSync: "true"}}
	hl, ha, seen := tr.NewHostMetadata(v, ref, "s-x-ns-x-vc")
	h := &metav1.ObjectMeta{Labels: hl, Annotations: ha}
	for i := range 3 {
		r := tr.SyncMetadata(&seen, v, h, ref, "s-x-ns-x-vc")
		if r.VirtualAnnotations[AnnotationForceSync] != "true" {
			t.Fatalf("sync %d dropped %s from the virtual object: %v", i, AnnotationForceSync, r.VirtualAnnotations)
		}
		if r.HostAnnotations[AnnotationForceSync] != "true" {
			t.Fatalf("sync %d: host annotations %v", i, r.HostAnnotations)
		}
		v = &metav1.ObjectMeta{Labels: r.VirtualLabels, Annotations: r.VirtualAnnotations}
		h = &metav1.ObjectMeta{Labels: r.HostLabels, Annotations: r.HostAnnotations}
		seen = r.Seen
	}
}

// Against StaleBase, the new virtual object wins every key of a host copy
// made from an earlier object of the same name: its keys are written, the
// old object's removed, none flows back.
func TestStaleBase(t *testing.T) {
	tr := Translator{VCluster: "vc", HostNamespace: "vc-host"}
	old := VirtualRef{Kind: "/v1, Kind=Service", Name: "web", Namespace: "ns", UID: "old"}
	hl, ha, _ := tr.NewHostMetadata(&metav1.ObjectMeta{Labels: map[string]string{"gen": "1", "old-only": "x"},
		Annotations: map[string]string{"note": "old"}}, old, "web-x-ns-x-vc")
	host := &metav1.ObjectMeta{Labels: hl, Annotations: ha}
	v := &metav1.ObjectMeta{Labels: map[string]string{"gen": "2"}, Annotations: map[string]string{"new": "yes"}}
	base := tr.StaleBase(host)
	r := tr.SyncMetadata(&base, v, host, VirtualRef{Kind: old.Kind, Name: "web", Namespace: "ns", UID: "new"}, "web-x-ns-x-vc")
	if !maps.Equal(r.VirtualLabels, v.Labels) || r.VirtualAnnotations["note"] != "" {
		t.Errorf("the old copy's keys flowed back: labels %v annotations %v", r.VirtualLabels, r.VirtualAnnotations)
	}
	if r.HostLabels["gen"] != "2" || r.HostLabels["old-only"] != "" || r.HostAnnotations["note"] != "" || r.HostAnnotations["new"] != "yes" {
		t.Errorf("host labels %v annotations %v, want the new object's", r.HostLabels, r.HostAnnotations)
	}
}
