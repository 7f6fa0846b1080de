package customresources

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

func TestParseName(t *testing.T) {
	for in, want := range map[string]string{"widgets.example.com": "widgets.example.com", "a.b": "a.b"} {
		gr, err := ParseName(in)
		if err != nil || gr.String() != want {
			t.Errorf("ParseName(%q) = %v, %v", in, gr, err)
		}
	}
	for _, in := range []string{"widgets", ".example.com", "widgets.", "Widgets.example.com", ""} {
		if _, err := ParseName(in); err == nil {
			t.Errorf("ParseName(%q) accepted", in)
		}
	}
}

func TestDescribeAndVirtualDefinition(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true},
			{Name: "v1", Served: true, Storage: true, Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}},
		},
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter},
	}}
	crd.Name = "widgets.example.com"
	crd.Labels = map[string]string{"app": "x"}
	def, err := Describe(crd)
	want := Definition{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Namespaced: true, StatusSubresource: true}
	if err != nil || def != want {
		t.Errorf("Describe = %+v, %v; want %+v", def, err, want)
	}
	v := VirtualDefinition(crd)
	if v.Labels[fromhost.Label] != "true" || v.Labels["app"] != "x" || crd.Labels[fromhost.Label] != "" {
		t.Errorf("labels: virtual %v, host %v", v.Labels, crd.Labels)
	}
	if v.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
		t.Errorf("conversion: virtual %v, host %v", v.Spec.Conversion, crd.Spec.Conversion)
	}
	crd.Spec.Versions[1].Storage = false
	if _, err := Describe(crd); err == nil {
		t.Error("Describe accepted a CRD without a storage version")
	}
}

func TestHostObjectAndContent(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	v := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "team", "uid": "u1", "resourceVersion": "7"},
		"spec":     map[string]any{"size": int64(3)}, "data": "top-level field", "status": map[string]any{"phase": "virtual"},
	}}
	h := HostObject(v, gvk, "w-x-team-x-vc", "host-ns", map[string]string{"l": "1"}, map[string]string{"a": "1"})
	want := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w-x-team-x-vc", "namespace": "host-ns",
			"labels": map[string]any{"l": "1"}, "annotations": map[string]any{"a": "1"}},
		"spec": map[string]any{"size": int64(3)}, "data": "top-level field",
	}
	if !reflect.DeepEqual(h.Object, want) {
		t.Errorf("HostObject =\n%v\nwant\n%v", h.Object, want)
	}
	h.Object["status"] = map[string]any{"phase": "host"}
	h.Object["old"] = "gone in virtual"
	v.Object["spec"] = map[string]any{"size": int64(5)}
	SetContent(h, v)
	if _, ok := h.Object["old"]; ok || h.Object["spec"].(map[string]any)["size"] != int64(5) || h.Object["status"].(map[string]any)["phase"] != "host" {
		t.Errorf("SetContent: %v", h.Object)
	}
}

func TestEnabled(t *testing.T) {
	got := Enabled(map[string]config.EnableSwitch{"b.x": {Enabled: true}, "a.x": {Enabled: true}, "c.x": {}})
	if !reflect.DeepEqual(got, []string{"a.x", "b.x"}) {
		t.Errorf("Enabled = %v", got)
	}
}
