package fromhost

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func priorityClass(labels map[string]any, value int64, extra map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": "high", "uid": "host-uid", "resourceVersion": "7", "managedFields": []any{map[string]any{"manager": "x"}}}
	if labels != nil {
		meta["labels"] = labels
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
		"metadata": meta, "value": value, "description": "host tier"}}
	for k, v := range extra {
		u.Object[k] = v
	}
	return u
}

func TestVirtualCopy(t *testing.T) {
	h := priorityClass(map[string]any{"tier": "gold"}, 1000, map[string]any{"status": map[string]any{"x": "y"}})
	got := VirtualCopy(h)
	if got.GetName() != "high" || got.GetUID() != "" || got.GetResourceVersion() != "" || got.GetManagedFields() != nil {
		t.Errorf("metadata not reduced to name, labels, annotations: %v", got.Object["metadata"])
	}
	if got.GetLabels()["tier"] != "gold" || got.GetLabels()[Label] != "true" {
		t.Errorf("labels %v", got.GetLabels())
	}
	if got.Object["value"] != int64(1000) || got.Object["description"] != "host tier" || got.Object["status"] != nil {
		t.Errorf("fields %v", got.Object)
	}
	if got.GetAPIVersion() != "scheduling.k8s.io/v1" || got.GetKind() != "PriorityClass" {
		t.Errorf("type %s %s", got.GetAPIVersion(), got.GetKind())
	}
	if _, marked := h.GetLabels()[Label]; marked {
		t.Error("VirtualCopy labelled the host object")
	}
	got.Object["value"] = int64(1)
	if h.Object["value"] != int64(1000) {
		t.Error("the copy shares the host object's values")
	}
}

func TestDiffers(t *testing.T) {
	want := VirtualCopy(priorityClass(nil, 1000, nil))
	same := want.DeepCopy()
	same.SetResourceVersion("42")
	same.SetUID("virtual-uid")
	same.Object["status"] = map[string]any{"ignored": true}
	if Differs(want, same) {
		t.Error("metadata the API server sets and status make a difference")
	}
	for name, edit := range map[string]func(u *unstructured.Unstructured){
		"a field":            func(u *unstructured.Unstructured) { u.Object["value"] = int64(5) },
		"a tenant's label":   func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{Label: "true", "mine": "x"}) },
		"an annotation":      func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) },
		"a field it lacks":   func(u *unstructured.Unstructured) { delete(u.Object, "description") },
		"an extra top field": func(u *unstructured.Unstructured) { u.Object["preemptionPolicy"] = "Never" },
	} {
		cur := want.DeepCopy()
		edit(cur)
		if !Differs(want, cur) {
			t.Errorf("%s edited in the virtual cluster is not seen", name)
		}
	}
}

func TestIsHostOwn(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels map[string]any
		want   bool
	}{
		{"the host's, no labels", nil, true},
		{"the host's, labelled", map[string]any{"tier": "gold"}, true},
		{"a virtual cluster's copy", map[string]any{translate.LabelManagedBy: "vc"}, false},
		{"a copy of a cluster with an empty name", map[string]any{translate.LabelManagedBy: ""}, false},
	} {
		if got := IsHostOwn(priorityClass(c.labels, 1, nil)); got != c.want {
			t.Errorf("%s: IsHostOwn = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIntoNamespace(t *testing.T) {
	m := NewIntoNamespace("kube-system")
	if _, ok := m.Host(types.NamespacedName{Namespace: "kube-system", Name: "cap-x-drivers"}); ok {
		t.Error("Host of a copy never named")
	}
	h := types.NamespacedName{Namespace: "drivers", Name: "cap"}
	v, ok := m.Virtual(h)
	if !ok || v != (types.NamespacedName{Namespace: "kube-system", Name: "cap-x-drivers"}) {
		t.Errorf("Virtual = %v, %v", v, ok)
	}
	if got, ok := m.Host(v); !ok || got != h {
		t.Errorf("Host = %v, %v", got, ok)
	}
	if other, _ := m.Virtual(types.NamespacedName{Namespace: "other", Name: "cap"}); other == v {
		t.Error("the same name in two host namespaces collides")
	}
}
