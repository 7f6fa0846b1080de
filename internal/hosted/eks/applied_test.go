package eks

import (
	"reflect"
	"testing"

	"github.com/clustersync/clustersync/internal/hosted/managed"
)

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
