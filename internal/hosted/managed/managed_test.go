package managed

import (
	"reflect"
	"testing"
)

type launchTemplate struct {
	ID      *string `json:"id,omitempty"`
	Version *int64  `json:"version,omitempty"`
}

type nodeGroup struct {
	Name           string             `json:"nodegroupName"`
	DesiredSize    *int64             `json:"desiredSize,omitempty"`
	Labels         *map[string]string `json:"labels,omitempty"`
	LaunchTemplate *launchTemplate    `json:"launchTemplate,omitempty"`
}

// spec has the shape of EKSClusterConfigSpec: identity fields, nillable
// managed fields, a never-adopted field and a keyed list.
type spec struct {
	DisplayName       string             `json:"displayName"`
	Region            string             `json:"region"`
	Imported          bool               `json:"imported"`
	KubernetesVersion *string            `json:"kubernetesVersion,omitempty"`
	Tags              *map[string]string `json:"tags,omitempty"`
	PrivateAccess     *bool              `json:"privateAccess,omitempty"`
	PublicAccess      *bool              `json:"publicAccess,omitempty"`
	Subnets           *[]string          `json:"subnets,omitempty"`
	NodeGroups        *[]nodeGroup       `json:"nodeGroups,omitempty"`
}

var opts = Options{KeyedLists: map[string]string{"nodeGroups": "nodegroupName"}, NeverAdopt: []string{"subnets"}}

func p[T any](v T) *T { return &v }

func ng(name string, size int64) nodeGroup { return nodeGroup{Name: name, DesiredSize: p(size)} }

func paths(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func conflictPaths(cs []Conflict) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func TestEffective(t *testing.T) {
	upstream := spec{DisplayName: "up", Region: "us-west-2", KubernetesVersion: p("1.31"), Tags: p(map[string]string{"a": "1"}),
		PrivateAccess: p(false), NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(3)), Labels: p(map[string]string{"x": "y"})}, ng("ng-b", 2)}}
	config := spec{DisplayName: "prod", Region: "us-west-2", Imported: true, Tags: p(map[string]string{"team": "x"}),
		NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(5))}}}
	got := Effective(config, upstream, opts)
	want := spec{DisplayName: "prod", Region: "us-west-2", Imported: true, KubernetesVersion: p("1.31"),
		Tags: p(map[string]string{"team": "x"}), PrivateAccess: p(false),
		NodeGroups: &[]nodeGroup{{Name: "ng-a", DesiredSize: p(int64(5)), Labels: p(map[string]string{"x": "y"})}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Effective =\n%+v\nwant\n%+v", got, want)
	}
	(*got.Tags)["mutated"] = "yes"
	if _, ok := (*config.Tags)["mutated"]; ok {
		t.Fatal("Effective shares a map with its input")
	}
	// An unmanaged node group list: upstream's.
	if got := Effective(spec{Region: "r"}, upstream, opts); len(*got.NodeGroups) != 2 {
		t.Fatalf("unmanaged node groups = %+v", got.NodeGroups)
	}
}

func TestReconcileFields(t *testing.T) {
	tests := []struct {
		name                      string
		config, upstream, applied spec
		push, adopt, conflicts    []string
		wantConfig                *spec
	}{
		{name: "in sync", config: spec{Tags: p(map[string]string{"a": "1"})}, upstream: spec{Tags: p(map[string]string{"a": "1"})},
			push: []string{}, adopt: []string{}, conflicts: []string{}},
		{name: "user change pushed", config: spec{Tags: p(map[string]string{"a": "2"})},
			upstream: spec{Tags: p(map[string]string{"a": "1"})}, applied: spec{Tags: p(map[string]string{"a": "1"})},
			push: []string{"tags"}, adopt: []string{}, conflicts: []string{}},
		{name: "never applied (set on an imported cluster) pushed", config: spec{KubernetesVersion: p("1.32")},
			upstream: spec{KubernetesVersion: p("1.31")},
			push:     []string{"kubernetesVersion"}, adopt: []string{}, conflicts: []string{}},
		{name: "outside change adopted", config: spec{PrivateAccess: p(false)},
			upstream: spec{PrivateAccess: p(true)}, applied: spec{PrivateAccess: p(false)},
			push: []string{}, adopt: []string{"privateAccess"}, conflicts: []string{},
			wantConfig: &spec{PrivateAccess: p(true)}},
		{name: "both changed: conflict, nothing written", config: spec{KubernetesVersion: p("1.32")},
			upstream: spec{KubernetesVersion: p("1.33")}, applied: spec{KubernetesVersion: p("1.31")},
			push: []string{}, adopt: []string{}, conflicts: []string{"kubernetesVersion"},
			wantConfig: &spec{KubernetesVersion: p("1.32")}},
		{name: "unmanaged field ignored", config: spec{}, upstream: spec{Tags: p(map[string]string{"a": "1"})},
			push: []string{}, adopt: []string{}, conflicts: []string{}, wantConfig: &spec{}},
		{name: "empty equals absent", config: spec{Tags: p(map[string]string{})}, upstream: spec{},
			push: []string{}, adopt: []string{}, conflicts: []string{}},
		{name: "never-adopt field: outside change ignored", config: spec{Subnets: p([]string{"s1"})},
			upstream: spec{Subnets: p([]string{"s1", "s2"})}, applied: spec{Subnets: p([]string{"s1"})},
			push: []string{}, adopt: []string{}, conflicts: []string{}},
		{name: "never-adopt field: user change pushed", config: spec{Subnets: p([]string{"s3"})},
			upstream: spec{Subnets: p([]string{"s1", "s2"})}, applied: spec{Subnets: p([]string{"s1"})},
			push: []string{"subnets"}, adopt: []string{}, conflicts: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := Effective(tt.config, spec{}, opts) // a deep copy
			plan := Reconcile(tt.config, tt.upstream, tt.applied, opts)
			if got := paths(plan.Push); !reflect.DeepEqual(got, tt.push) {
				t.Errorf("push = %v, want %v", got, tt.push)
			}
			if got := paths(plan.Adopt); !reflect.DeepEqual(got, tt.adopt) {
				t.Errorf("adopt = %v, want %v", got, tt.adopt)
			}
			if got := conflictPaths(plan.Conflicts); !reflect.DeepEqual(got, tt.conflicts) {
				t.Errorf("conflicts = %v, want %v", got, tt.conflicts)
			}
			if tt.wantConfig != nil && !reflect.DeepEqual(plan.Config, *tt.wantConfig) {
				t.Errorf("config = %+v, want %+v", plan.Config, *tt.wantConfig)
			}
			if !reflect.DeepEqual(Effective(tt.config, spec{}, opts), before) {
				t.Error("Reconcile modified its config input")
			}
		})
	}
}

// Node groups are compared by name: one changed in the console and another
// in clustersync are both kept; additions and deletions on either side are
// told apart with the applied spec.
func TestReconcileNodeGroups(t *testing.T) {
	applied := spec{NodeGroups: &[]nodeGroup{ng("ng-a", 3), {Name: "ng-b", DesiredSize: p(int64(2)), Labels: p(map[string]string{"tier": "web"})}, ng("gone", 1), ng("dropped", 1)}}
	config := spec{NodeGroups: &[]nodeGroup{
		ng("ng-a", 3), // unchanged by the user; scaled in the console
		{Name: "ng-b", DesiredSize: p(int64(2)), Labels: p(map[string]string{"tier": "api"})}, // relabelled by the user
		ng("gone", 1), // deleted in the console, unchanged here
		ng("new", 4),  // added by the user
		// "dropped" removed by the user
	}}
	upstream := spec{NodeGroups: &[]nodeGroup{ng("ng-a", 5), {Name: "ng-b", DesiredSize: p(int64(2)), Labels: p(map[string]string{"tier": "web"})},
		ng("dropped", 1), ng("console", 2)}} // "console" created outside
	plan := Reconcile(config, upstream, applied, opts)

	if got, want := paths(plan.Push), []string{"nodeGroups[ng-b].labels", "nodeGroups[new]", "nodeGroups[dropped]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("push = %v, want %v", got, want)
	}
	if got, want := paths(plan.Adopt), []string{"nodeGroups[ng-a].desiredSize", "nodeGroups[gone]", "nodeGroups[console]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("adopt = %v, want %v", got, want)
	}
	if len(plan.Conflicts) != 0 {
		t.Errorf("conflicts = %+v", plan.Conflicts)
	}
	want := []nodeGroup{ng("ng-a", 5), {Name: "ng-b", DesiredSize: p(int64(2)), Labels: p(map[string]string{"tier": "api"})}, ng("new", 4), ng("console", 2)}
	if !reflect.DeepEqual(*plan.Config.NodeGroups, want) {
		t.Errorf("config node groups = %+v, want %+v", *plan.Config.NodeGroups, want)
	}
	// A node group deleted in the console after the user changed it: conflict, kept.
	config2 := spec{NodeGroups: &[]nodeGroup{ng("gone", 9)}}
	plan = Reconcile(config2, spec{NodeGroups: &[]nodeGroup{}}, spec{NodeGroups: &[]nodeGroup{ng("gone", 1)}}, opts)
	if got := conflictPaths(plan.Conflicts); !reflect.DeepEqual(got, []string{"nodeGroups[gone]"}) || len(*plan.Config.NodeGroups) != 1 {
		t.Errorf("conflicts = %v, config = %+v", got, plan.Config.NodeGroups)
	}
}

// The reference's race (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters):
// PrivateAccess is enabled in the EKS console at 11:01, tags are edited in
// clustersync at 11:03, inside the refresh window. Rancher loses the console
// change; clustersync keeps both.
func TestRaceFromTheReference(t *testing.T) {
	oldTags, newTags := map[string]string{"team": "a"}, map[string]string{"team": "a", "cost": "42"}
	applied := spec{PrivateAccess: p(false), Tags: p(oldTags)}
	// 11:01: console change; the 11:00 refresh has not seen it yet, so the
	// user's 11:03 edit starts from the stale config.
	upstream := spec{PrivateAccess: p(true), Tags: p(oldTags)}
	config := spec{PrivateAccess: p(false), Tags: p(newTags)}

	plan := Reconcile(config, upstream, applied, opts)
	if got := paths(plan.Push); !reflect.DeepEqual(got, []string{"tags"}) {
		t.Fatalf("push = %v, want [tags]", got)
	}
	if got := paths(plan.Adopt); !reflect.DeepEqual(got, []string{"privateAccess"}) {
		t.Fatalf("adopt = %v, want [privateAccess]", got)
	}
	if plan.Adopt[0].Old != false || plan.Adopt[0].New != true {
		t.Errorf("adopt change = %+v, want false → true", plan.Adopt[0])
	}
	// The controller pushes the tags (only the tags: privateAccess is not in
	// the push list, so the console change is not reverted) and records them.
	if err := MarkApplied(&plan.Applied, plan.Config, "tags", opts); err != nil {
		t.Fatal(err)
	}
	upstream.Tags = p(newTags) // the cloud after the tag update
	next := Reconcile(plan.Config, upstream, plan.Applied, opts)
	if len(next.Push)+len(next.Adopt)+len(next.Conflicts) != 0 {
		t.Fatalf("not converged: %+v", next)
	}
	if !*next.Config.PrivateAccess || !reflect.DeepEqual(*next.Config.Tags, newTags) {
		t.Errorf("final config privateAccess=%v tags=%v: both changes must be kept", *next.Config.PrivateAccess, *next.Config.Tags)
	}
}

func TestMarkApplied(t *testing.T) {
	config := spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-a", 5), ng("new", 2)}}
	applied := spec{NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("old", 1)}}
	for _, path := range []string{"tags", "nodeGroups[ng-a].desiredSize", "nodeGroups[new]", "nodeGroups[old]"} {
		if err := MarkApplied(&applied, config, path, opts); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	want := spec{Tags: p(map[string]string{"a": "1"}), NodeGroups: &[]nodeGroup{ng("ng-a", 5), ng("new", 2)}}
	if !reflect.DeepEqual(applied, want) {
		t.Errorf("applied = %+v, want %+v", applied, want)
	}
	if err := MarkApplied(&applied, config, "nope", opts); err == nil {
		t.Error("unknown path accepted")
	}
}

// Element finds a keyed list's element by its key, nil for none.
func TestElement(t *testing.T) {
	type pool struct {
		Name  string `json:"name"`
		Count *int   `json:"count,omitempty"`
	}
	list := &[]pool{{Name: "a"}, {Name: "b"}}
	if p := Element(list, "name", "b"); p != &(*list)[1] {
		t.Errorf("Element b = %v, want the second element itself", p)
	}
	if p := Element(list, "name", "c"); p != nil {
		t.Errorf("Element c = %v, want nil", p)
	}
	if p := Element[pool](nil, "name", "a"); p != nil {
		t.Errorf("Element of nil = %v, want nil", p)
	}
}
