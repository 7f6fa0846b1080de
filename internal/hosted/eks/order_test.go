package eks

import (
	"reflect"
	"testing"

	"github.com/clustersync/clustersync/internal/hosted/managed"
)

func TestOrderUpdates(t *testing.T) {
	in := []managed.Change{
		{Path: "subnets", Old: []string{"a"}, New: []string{"b"}},
		{Path: "ebsCSIDriver", Old: false, New: true},
		{Path: "nodeGroups[ng-a].desiredSize", Old: 3, New: 5},
		{Path: "nodeGroups[old]", Old: "ng", New: nil},
		{Path: "nodeGroups[new]", Old: nil, New: "ng"},
		{Path: "nodeGroups[ng-a].version", Old: "1.30", New: "1.31"},
		{Path: "nodeGroups[ng-b].launchTemplate", Old: nil, New: "lt"},
		{Path: "nodeGroups[ng-c].diskSize", Old: 20, New: 40},
		{Path: "loggingTypes"},
		{Path: "tags"},
		{Path: "publicAccessSources"},
		{Path: "privateAccess"},
		{Path: "kubernetesVersion"},
	}
	want := []string{"kubernetesVersion", "privateAccess", "publicAccessSources", "tags", "loggingTypes",
		"nodeGroups[new]", "nodeGroups[old]", "nodeGroups[ng-b].launchTemplate", "nodeGroups[ng-c].diskSize", "nodeGroups[ng-a].version",
		"nodeGroups[ng-a].desiredSize", "ebsCSIDriver", "subnets"}
	var got []string
	for _, c := range OrderUpdates(in) {
		got = append(got, c.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v\nwant    %v", got, want)
	}
	if !Immutable(managed.Change{Path: "serviceRole"}) || Immutable(managed.Change{Path: "tags"}) {
		t.Error("Immutable misclassifies")
	}
}

// Fields one EKS call sets together are pushed together, so that the call
// records all of them; other fields go one per call.
func TestSameCall(t *testing.T) {
	for _, tt := range []struct {
		name    string
		ordered []string
		want    []string
	}{
		{"endpoint access", []string{"publicAccess", "privateAccess", "tags"}, []string{"publicAccess", "privateAccess"}},
		{"scaling of one node group", []string{"nodeGroups[a].desiredSize", "nodeGroups[b].minSize", "nodeGroups[a].maxSize", "nodeGroups[a].labels"},
			[]string{"nodeGroups[a].desiredSize", "nodeGroups[a].maxSize"}},
		{"managed template fields", []string{"nodeGroups[a].diskSize", "nodeGroups[a].instanceType", "nodeGroups[a].version"},
			[]string{"nodeGroups[a].diskSize", "nodeGroups[a].instanceType"}},
		{"a whole node group alone", []string{"nodeGroups[a]", "nodeGroups[a].desiredSize"}, []string{"nodeGroups[a]"}},
		{"tags alone", []string{"tags", "loggingTypes"}, []string{"tags"}},
		{"public access sources apart from access", []string{"publicAccessSources", "publicAccess"}, []string{"publicAccessSources"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var in []managed.Change
			for _, p := range tt.ordered {
				in = append(in, managed.Change{Path: p})
			}
			var got []string
			for _, ch := range sameCall(in) {
				got = append(got, ch.Path)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sameCall(%v) = %v, want %v", tt.ordered, got, tt.want)
			}
		})
	}
}
