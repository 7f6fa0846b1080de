package managed

import (
	"reflect"
	"testing"
)

func TestValue(t *testing.T) {
	s := spec{Tags: p(map[string]string{"b": "2", "a": "1"}), NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(3))}}}
	for _, tt := range []struct{ path, want string }{
		{"tags", `{"a":"1","b":"2"}`},
		{"kubernetesVersion", `null`},
		{"nodeGroups[ng-a].desiredSize", `3`},
		{"nodeGroups[ng-a].labels", `null`},
		{"nodeGroups[ng-a]", `{"nodegroupName":"ng-a","desiredSize":3}`},
		{"nodeGroups[missing]", `null`},
		{"nodeGroups[missing].desiredSize", `null`},
	} {
		got, err := Value(s, tt.path, opts)
		if err != nil || string(got) != tt.want {
			t.Errorf("Value(%s) = %s, %v; want %s", tt.path, got, err, tt.want)
		}
	}
	for _, bad := range []string{"nope", "tags[x]", "nodeGroups[ng-a].nope", "nodeGroups[ng-a", "nodeGroups[ng-a]x", "a.b", ""} {
		if _, err := Value(s, bad, opts); err == nil {
			t.Errorf("Value(%q) accepted", bad)
		}
	}
}

func TestSetValue(t *testing.T) {
	base := func() spec {
		return spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 1)}}
	}
	for _, tt := range []struct {
		name, path, raw string
		want            spec
	}{
		{"field", "tags", `{"x":"y"}`, spec{Tags: p(map[string]string{"x": "y"}), NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 1)}}},
		{"field unset", "tags", `null`, spec{NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 1)}}},
		{"element field", "nodeGroups[ng-b].desiredSize", `7`, spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 7)}}},
		{"element field of a new element", "nodeGroups[ng-c].desiredSize", `2`,
			spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 1), ng("ng-c", 2)}}},
		{"element removed", "nodeGroups[ng-a]", `null`, spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-b", 1)}}},
		{"element replaced, order kept", "nodeGroups[ng-a]", `{"nodegroupName":"ng-a","labels":{"t":"w"}}`,
			spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{{Name: "ng-a", Labels: p(map[string]string{"t": "w"})}, ng("ng-b", 1)}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			if err := SetValue(&s, tt.path, []byte(tt.raw), opts); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Errorf("got %+v, want %+v", s, tt.want)
			}
			// Value reads back what SetValue wrote.
			if got, _ := Value(s, tt.path, opts); !SameValue(got, []byte(tt.raw)) {
				t.Errorf("Value after SetValue = %s, want %s", got, tt.raw)
			}
		})
	}
	s := base()
	if err := SetValue(&s, "nodeGroups[ng-a].desiredSize", []byte(`"three"`), opts); err == nil {
		t.Error("a string was taken for desiredSize")
	}
	if !reflect.DeepEqual(s, base()) {
		t.Error("a refused SetValue changed the spec")
	}
}

// Target takes only the pushed paths from the config: a field of the same
// call that is not pushed keeps upstream's value.
func TestTarget(t *testing.T) {
	config := spec{DisplayName: "prod", PrivateAccess: p(false), PublicAccess: p(false),
		NodeGroups: &[]nodeGroup{ng("ng-a", 5), ng("new", 1)}}
	upstream := spec{DisplayName: "up", PrivateAccess: p(true), PublicAccess: p(true),
		NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(3)), Labels: p(map[string]string{"x": "y"})}, ng("gone", 2)}}
	got, err := Target(config, upstream, []Change{{Path: "publicAccess"}, {Path: "nodeGroups[ng-a].desiredSize"}, {Path: "nodeGroups[new]"}, {Path: "nodeGroups[gone]"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := spec{DisplayName: "prod", PrivateAccess: p(true), PublicAccess: p(false),
		NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(5)), Labels: p(map[string]string{"x": "y"})}, ng("new", 1)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Target =\n%+v\nwant\n%+v", got, want)
	}
}

func TestAcknowledge(t *testing.T) {
	applied := spec{Tags: p(map[string]string{"team": "a"})}
	config := spec{Tags: p(map[string]string{"team": "cs"})}
	upstream := spec{Tags: p(map[string]string{"team": "console"})}
	plan := Reconcile(config, upstream, applied, opts)
	if got := conflictPaths(plan.Conflicts); !reflect.DeepEqual(got, []string{"tags"}) {
		t.Fatalf("conflicts = %v", got)
	}
	recConfig, _ := Render(plan.Conflicts[0].Config)
	recUpstream, _ := Render(plan.Conflicts[0].Upstream)

	// Not edited since: still a conflict.
	a := applied
	if acked, err := Acknowledge(&a, config, "tags", recConfig, recUpstream, opts); err != nil || acked {
		t.Fatalf("unedited config acknowledged (%v)", err)
	}
	if got := conflictPaths(Reconcile(config, upstream, a, opts).Conflicts); !reflect.DeepEqual(got, []string{"tags"}) {
		t.Errorf("conflicts = %v", got)
	}
	// Edited: the new value is pushed over the recorded upstream value.
	edited := spec{Tags: p(map[string]string{"team": "resolved"})}
	if acked, err := Acknowledge(&a, edited, "tags", recConfig, recUpstream, opts); err != nil || !acked {
		t.Fatalf("edit not taken as the answer (%v)", err)
	}
	next := Reconcile(edited, upstream, a, opts)
	if got := paths(next.Push); !reflect.DeepEqual(got, []string{"tags"}) || len(next.Conflicts) != 0 {
		t.Errorf("after the answer: push %v conflicts %v", got, conflictPaths(next.Conflicts))
	}
	// Edited, but upstream moved again since: a new conflict.
	moved := spec{Tags: p(map[string]string{"team": "console-2"})}
	if got := conflictPaths(Reconcile(edited, moved, a, opts).Conflicts); !reflect.DeepEqual(got, []string{"tags"}) {
		t.Errorf("upstream moved again: conflicts = %v", got)
	}
}

func TestLanded(t *testing.T) {
	up := spec{Tags: p(map[string]string{}), NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(3)), Labels: p(map[string]string{"x": "y"})}}}
	for _, tt := range []struct {
		path, raw string
		want      bool
	}{
		{"tags", `{}`, true},
		{"tags", `null`, true}, // unset equals empty
		{"tags", `{"a":"1"}`, false},
		{"nodeGroups[ng-a].desiredSize", `3`, true},
		{"nodeGroups[ng-a].desiredSize", `4`, false},
		{"nodeGroups[ng-a]", `{"nodegroupName":"ng-a","desiredSize":1}`, true}, // created: presence only
		{"nodeGroups[ng-b]", `{"nodegroupName":"ng-b"}`, false},
		{"nodeGroups[ng-b]", `null`, true}, // deleted
		{"nodeGroups[ng-a]", `null`, false},
	} {
		got, err := Landed(up, tt.path, []byte(tt.raw), opts)
		if err != nil || got != tt.want {
			t.Errorf("Landed(%s, %s) = %v, %v; want %v", tt.path, tt.raw, got, err, tt.want)
		}
	}
}

// An adoption is not recorded as applied until the config holds the
// adopted value (then the field is in sync); a node group created outside
// clustersync is not recorded either, so that its absence from the config
// never reads as a removal to push.
func TestAdoptLeavesApplied(t *testing.T) {
	applied := spec{PrivateAccess: p(false), NodeGroups: &[]nodeGroup{ng("ng-a", 3)}}
	config := spec{PrivateAccess: p(false), NodeGroups: &[]nodeGroup{ng("ng-a", 3)}}
	upstream := spec{PrivateAccess: p(true), NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("console", 2)}}
	plan := Reconcile(config, upstream, applied, opts)
	if got := paths(plan.Adopt); !reflect.DeepEqual(got, []string{"privateAccess", "nodeGroups[console]"}) {
		t.Fatalf("adopt = %v", got)
	}
	if want := (spec{PrivateAccess: p(false), NodeGroups: &[]nodeGroup{ng("ng-a", 3)}}); !reflect.DeepEqual(plan.Applied, want) {
		t.Errorf("applied = %+v, want %+v", plan.Applied, want)
	}
	// The operator, still on the old config, pushes neither back.
	if again := Reconcile(config, upstream, plan.Applied, opts); len(again.Push) != 0 {
		t.Errorf("pushed %v", paths(again.Push))
	}
	// Once the config holds the adopted values, they are applied.
	final := Reconcile(plan.Config, upstream, plan.Applied, opts)
	if len(final.Push)+len(final.Adopt)+len(final.Conflicts) != 0 || !*final.Applied.PrivateAccess || len(*final.Applied.NodeGroups) != 2 {
		t.Errorf("after adoption: %+v", final)
	}
}

func TestSplitElementPath(t *testing.T) {
	for _, tt := range []struct {
		path, key, field string
		ok               bool
	}{
		{"nodePools[a]", "a", "", true},
		{"nodePools[a].count", "a", "count", true},
		{"nodeGroups[a].count", "", "", false},
		{"tags", "", "", false},
	} {
		key, field, ok := SplitElementPath(tt.path, "nodePools")
		if key != tt.key || field != tt.field || ok != tt.ok {
			t.Errorf("SplitElementPath(%q) = %q, %q, %v; want %q, %q, %v", tt.path, key, field, ok, tt.key, tt.field, tt.ok)
		}
	}
}
