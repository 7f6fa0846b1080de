package patches

import (
	"reflect"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in, canonical string
		wantErr       bool
	}{
		{in: "spec.containers[*].image", canonical: "spec.containers[*].image"},
		{in: `metadata.annotations["example.com/owner"]`, canonical: `metadata.annotations["example.com/owner"]`},
		{in: `metadata.annotations['a.b']`, canonical: `metadata.annotations["a.b"]`},
		{in: "spec.containers[0].env[12].value", canonical: "spec.containers[0].env[12].value"},
		{in: "metadata.labels.app", canonical: "metadata.labels.app"},
		{in: `["top.level"].x`, canonical: `["top.level"].x`},
		// FuzzPath: keys with quotes or backslashes were printed Go-quoted
		// (["\""]), which ParsePath does not read back.
		{in: `a["it's"]['say "hi"']`, canonical: `a["it's"]['say "hi"']`},
		{in: `a."b'c`, canonical: `a."b'c`},
		{in: `a["back\slash"]`, canonical: `a["back\slash"]`},
		{in: `["é"]`, canonical: `["é"]`},
		{in: "", wantErr: true},
		{in: "a..b", wantErr: true},
		{in: "a.", wantErr: true},
		{in: ".a", wantErr: true},
		{in: "a[", wantErr: true},
		{in: "a[x]", wantErr: true},
		{in: "a[-1]", wantErr: true},
		{in: `a["x]`, wantErr: true},
		{in: `a["x"`, wantErr: true},
		{in: "a[0]b", wantErr: true},
	} {
		p, err := ParsePath(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParsePath(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && p.String() != tc.canonical {
			t.Errorf("ParsePath(%q).String() = %q, want %q", tc.in, p.String(), tc.canonical)
		}
	}
}

func TestMatchAndSet(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a.b/c": "x"}},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "a", "image": "nginx"},
			map[string]any{"name": "b"},
			map[string]any{"name": "c", "image": "redis"},
		}},
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"spec.containers[*].image", []string{"spec.containers[0].image", "spec.containers[2].image"}},
		{"spec.containers[1].image", nil},
		{"spec.containers[7].name", nil},
		{`metadata.annotations["a.b/c"]`, []string{`metadata.annotations["a.b/c"]`}},
		{"metadata.annotations.missing", nil},
		{"spec.containers.name", nil}, // a list is not a map
		{"spec[*]", nil},              // a map is not a list
	} {
		p, err := ParsePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range p.Match(obj) {
			got = append(got, l.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Match(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}

	p, _ := ParsePath("spec.containers[*].image")
	locs := p.Match(obj)
	locs[0].Set(obj, "nginx:2", false)
	locs[1].Set(obj, nil, true)
	c := obj["spec"].(map[string]any)["containers"].([]any)
	if c[0].(map[string]any)["image"] != "nginx:2" {
		t.Errorf("Set: %v", c[0])
	}
	if _, ok := c[2].(map[string]any)["image"]; ok {
		t.Errorf("Set(remove) kept the key: %v", c[2])
	}
	if v, ok := Relative(map[string]any{"ref": map[string]any{"name": "s"}}, "ref.name"); !ok || v != "s" {
		t.Errorf("Relative = %v, %v", v, ok)
	}
	if _, ok := Relative("x", "a"); ok {
		t.Error("Relative of a string found a field")
	}
}
