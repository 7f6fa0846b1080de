package main

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

func TestValues(t *testing.T) {
	got, err := values(append(benchSets(), "controlPlane.statefulSet.resources.limits.ephemeral-storage=null",
		"string:controlPlane.statefulSet.env[0].value=50", "policies.limitRange.enabled=true"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"sync":     map[string]any{"toHost": map[string]any{"secrets": map[string]any{"all": true}}},
		"policies": map[string]any{"resourceQuota": map[string]any{"enabled": false}, "limitRange": map[string]any{"enabled": true}},
		"controlPlane": map[string]any{"statefulSet": map[string]any{
			"resources": map[string]any{"limits": map[string]any{"ephemeral-storage": nil}},
			"env":       []any{map[string]any{"value": "50"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values = %#v\nwant %#v", got, want)
	}
	if _, err := values([]string{"a[=1"}); err == nil {
		t.Error("a malformed set: no error")
	}
}

func TestDistroTag(t *testing.T) {
	c := &chart.Chart{Values: map[string]any{"controlPlane": map[string]any{"distro": map[string]any{"k8s": map[string]any{"image": map[string]any{"tag": "v1.36.0"}}}}}}
	if tag, err := distroTag(c); err != nil || tag != "v1.36.0" {
		t.Errorf("distroTag = %q, %v; want v1.36.0", tag, err)
	}
	for _, v := range []map[string]any{{}, {"controlPlane": map[string]any{"distro": map[string]any{"k8s": map[string]any{"image": map[string]any{"tag": "latest"}}}}}} {
		if tag, err := distroTag(&chart.Chart{Values: v}); err == nil {
			t.Errorf("distroTag of %v = %q, want an error", v, tag)
		}
	}
}
