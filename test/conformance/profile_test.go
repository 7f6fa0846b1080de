package conformance

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestWithDefaultPolicies(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]any // top-level keys of the result
		wantErr  string
	}{
		{"policies left out", "sync:\n  toHost:\n    priorityClasses:\n      enabled: true\npolicies:\n  podSecurityStandard: privileged\n",
			map[string]any{"sync": map[string]any{"toHost": map[string]any{"priorityClasses": map[string]any{"enabled": true}}}}, ""},
		{"no policies", "sync: {}\n", nil, "no policies key"},
		{"not a mapping", "- a\n", nil, "values:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := WithDefaultPolicies([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := yaml.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			gy, _ := yaml.Marshal(got)
			wy, _ := yaml.Marshal(tc.want)
			if string(gy) != string(wy) {
				t.Errorf("got\n%s\nwant\n%s", gy, wy)
			}
		})
	}
	// The repository's file: every key but policies kept.
	data, err := os.ReadFile(ConformanceValues)
	if err != nil {
		t.Fatal(err)
	}
	out, err := WithDefaultPolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["policies"]; ok || got["sync"] == nil || got["controlPlane"] == nil {
		t.Errorf("%s without policies: top-level keys %v, want sync and controlPlane only", ConformanceValues, slices.Collect(maps.Keys(got)))
	}
}
