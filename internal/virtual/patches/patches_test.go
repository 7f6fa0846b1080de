package patches

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var tr = translate.Translator{VCluster: "vc", HostNamespace: "host-ns"}

func TestCompileErrors(t *testing.T) {
	const section = "sync.toHost.pods.patches"
	for _, tc := range []struct {
		name string
		p    config.Patch
		want string
	}{
		{"no path", config.Patch{Expression: "value"}, section + "[0].path: path is empty"},
		{"bad path", config.Patch{Path: "a..b", Expression: "value"}, section + "[0].path"},
		{"bad expression", config.Patch{Path: "a", Expression: "value +"}, section + "[0].expression: does not compile"},
		{"bad reverse", config.Patch{Path: "a", Expression: "value", ReverseExpression: "("}, section + "[0].reverseExpression"},
		{"no mode", config.Patch{Path: "a"}, "needs exactly one of expression/reverseExpression, reference and labels, has 0"},
		{"two modes", config.Patch{Path: "a", Expression: "value", Labels: &config.PatchLabels{}}, "has 2"},
		{"reference without kind", config.Patch{Path: "a", Reference: &config.PatchReference{}}, section + "[0].reference: kind or kindPath is required"},
	} {
		_, err := Compile(section, []config.Patch{tc.p}, DefaultLimits())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	if s, err := Compile(section, nil, DefaultLimits()); s != nil || err != nil {
		t.Errorf("Compile(nil) = %v, %v", s, err)
	}
}

func mustCompile(t *testing.T, ps ...config.Patch) *Set {
	t.Helper()
	s, err := Compile("sync.toHost.configMaps.patches", ps, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExpressionRoundTrip(t *testing.T) {
	s := mustCompile(t, config.Patch{Path: `metadata.annotations["example.com/team"]`,
		Expression: `"team-" + value`, ReverseExpression: `value.slice("team-".length)`})
	vref := translate.VirtualRef{Name: "cm", Namespace: "default"}
	virtual := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"example.com/team": "a"}}}
	host := runtime.DeepCopyJSON(virtual)
	if err := s.ToHost(host, vref, tr); err != nil {
		t.Fatal(err)
	}
	if got := host["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/team"]; got != "team-a" {
		t.Fatalf("ToHost: %v", got)
	}
	// Unchanged on the host: the view equals the virtual object.
	view, err := s.ToVirtual(host, virtual, vref)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(view, virtual) {
		t.Errorf("ToVirtual = %v, want %v", view, virtual)
	}
	if host["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/team"] != "team-a" {
		t.Error("ToVirtual modified host")
	}
	// Edited on the host: the reverse expression brings the edit back.
	host["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/team"] = "team-b"
	view, _ = s.ToVirtual(host, virtual, vref)
	if got := view["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/team"]; got != "b" {
		t.Errorf("ToVirtual after a host edit = %v, want b", got)
	}
}

func TestOneWayExpressionDoesNotFlowBack(t *testing.T) {
	s := mustCompile(t, config.Patch{Path: "spec.containers[*].image", Expression: `"mirror.local/" + value`})
	vref := translate.VirtualRef{Name: "p", Namespace: "default"}
	virtual := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"image": "nginx"}, map[string]any{"name": "noimage"}, map[string]any{"image": "redis"}}}}
	host := runtime.DeepCopyJSON(virtual)
	if err := s.ToHost(host, vref, tr); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"image": "mirror.local/nginx"}, map[string]any{"name": "noimage"}, map[string]any{"image": "mirror.local/redis"}}}}
	if !reflect.DeepEqual(host, want) {
		t.Fatalf("ToHost = %v", host)
	}
	host["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "edited-on-host"
	view, err := s.ToVirtual(host, virtual, vref)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(view, virtual) {
		t.Errorf("ToVirtual = %v, want the virtual values %v", view, virtual)
	}
}

// A patch that removes a field on the host leaves it in the view, so the
// metadata merge never takes its absence for a host-side deletion.
func TestRemovingPatchKeepsVirtualValue(t *testing.T) {
	s := mustCompile(t, config.Patch{Path: `metadata.annotations["storageclass.kubernetes.io/is-default-class"]`, Expression: "undefined"})
	vref := translate.VirtualRef{Name: "fast"}
	virtual := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"storageclass.kubernetes.io/is-default-class": "true", "keep": "x"}}}
	host := runtime.DeepCopyJSON(virtual)
	if err := s.ToHost(host, vref, tr); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"keep": "x"}; !reflect.DeepEqual(host["metadata"].(map[string]any)["annotations"], want) {
		t.Fatalf("host annotations %v, want %v", host["metadata"], want)
	}
	view, err := s.ToVirtual(host, virtual, vref)
	if err != nil || !reflect.DeepEqual(view, virtual) {
		t.Errorf("ToVirtual = %v, %v; want the virtual object", view, err)
	}
}

func TestExpressionErrorNamesPatchPathAndObject(t *testing.T) {
	s := mustCompile(t,
		config.Patch{Path: "data.a", Expression: `value`},
		config.Patch{Path: "data.b", Expression: `value.nope.deeper`})
	host := map[string]any{"data": map[string]any{"a": "1", "b": "2"}}
	err := s.ToHost(host, translate.VirtualRef{Name: "cm", Namespace: "team"}, tr)
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v is not an *Error", err)
	}
	for _, want := range []string{"sync.toHost.configMaps.patches[1]", "(path data.b)", "on team/cm", "expression at data.b", "TypeError"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestReferencePatch(t *testing.T) {
	s := mustCompile(t,
		config.Patch{Path: `metadata.annotations["example.com/secret"]`, Reference: &config.PatchReference{APIVersion: "v1", Kind: "Secret"}},
		config.Patch{Path: "spec.credentials", Reference: &config.PatchReference{APIVersion: "v1", Kind: "Secret", NamePath: "name", NamespacePath: "namespace"}},
		config.Patch{Path: "spec.target", Reference: &config.PatchReference{KindPath: "kind", NamePath: "name"}},
	)
	virtual := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"example.com/secret": "db-pass"}},
		"spec": map[string]any{
			"credentials": map[string]any{"name": "creds", "namespace": "other"},
			"target":      map[string]any{"kind": "ConfigMap", "name": "settings"},
		},
	}
	refs := s.References(virtual, "team")
	want := []mapping.Ref{
		{Kind: "Secret", Namespace: "team", Name: "db-pass"},
		{Kind: "Secret", Namespace: "other", Name: "creds"},
		{Kind: "ConfigMap", Namespace: "team", Name: "settings"},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("References = %v, want %v", refs, want)
	}
	host := runtime.DeepCopyJSON(virtual)
	if err := s.ToHost(host, translate.VirtualRef{Name: "x", Namespace: "team"}, tr); err != nil {
		t.Fatal(err)
	}
	wantHost := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"example.com/secret": "db-pass-x-team-x-vc"}},
		"spec": map[string]any{
			"credentials": map[string]any{"name": "creds-x-other-x-vc", "namespace": "host-ns"},
			"target":      map[string]any{"kind": "ConfigMap", "name": "settings-x-team-x-vc"},
		},
	}
	if !reflect.DeepEqual(host, wantHost) {
		t.Errorf("ToHost = %v\nwant %v", host, wantHost)
	}
	view, err := s.ToVirtual(host, virtual, translate.VirtualRef{Name: "x", Namespace: "team"})
	if err != nil || !reflect.DeepEqual(view, virtual) {
		t.Errorf("ToVirtual = %v, %v; want the virtual object", view, err)
	}
	bad := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"example.com/secret": int64(3)}}}
	if err := s.ToHost(bad, translate.VirtualRef{Name: "x", Namespace: "team"}, tr); err == nil || !strings.Contains(err.Error(), "a number, not an object name") {
		t.Errorf("a number as a reference: %v", err)
	}
}

func TestLabelsPatch(t *testing.T) {
	s := mustCompile(t,
		config.Patch{Path: "spec.selector", Labels: &config.PatchLabels{}},
		config.Patch{Path: "spec.podSelector", Labels: &config.PatchLabels{}})
	host := map[string]any{"spec": map[string]any{
		"selector": map[string]any{"app": "web"},
		"podSelector": map[string]any{
			"matchLabels":      map[string]any{"app": "web"},
			"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"a"}}},
		},
	}}
	if err := s.ToHost(host, translate.VirtualRef{Name: "x", Namespace: "team"}, tr); err != nil {
		t.Fatal(err)
	}
	wantSel := map[string]any{}
	for k, v := range tr.HostSelector(map[string]string{"app": "web"}, "team") {
		wantSel[k] = v
	}
	spec := host["spec"].(map[string]any)
	if !reflect.DeepEqual(spec["selector"], wantSel) {
		t.Errorf("selector = %v, want %v", spec["selector"], wantSel)
	}
	ps := spec["podSelector"].(map[string]any)
	if !reflect.DeepEqual(ps["matchLabels"], wantSel) {
		t.Errorf("podSelector.matchLabels = %v, want %v", ps["matchLabels"], wantSel)
	}
	if k := ps["matchExpressions"].([]any)[0].(map[string]any)["key"]; k != tr.HostLabelKey("tier") {
		t.Errorf("matchExpressions key = %v, want %v", k, tr.HostLabelKey("tier"))
	}
	bad := map[string]any{"spec": map[string]any{"selector": map[string]any{"app": int64(1)}}}
	if err := s.ToHost(bad, translate.VirtualRef{Name: "x", Namespace: "team"}, tr); err == nil || !strings.Contains(err.Error(), `label "app" is a number`) {
		t.Errorf("a number as a label value: %v", err)
	}
}
