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
