package eks

import (
	"reflect"
	"testing"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// The reference's 11:01/11:03 race on the real EKSClusterConfigSpec, with
// node groups: the console enables the private endpoint and scales ng-a;
// clustersync edits tags and ng-b's labels. Everything is kept.
func TestManagedEKSSpecRace(t *testing.T) {
	base := func() eksv1.EKSClusterConfigSpec {
		return eksv1.EKSClusterConfigSpec{
			DisplayName: "prod", Region: "us-west-2", AmazonCredentialSecret: "clustersync-global-data:aws",
			KubernetesVersion: ptr("1.31"), PrivateAccess: ptr(false), PublicAccess: ptr(true),
			Tags:    ptr(map[string]string{"team": "a"}),
			Subnets: ptr([]string{"subnet-1"}),
			NodeGroups: ptr([]eksv1.NodeGroup{
				{NodegroupName: "ng-a", DesiredSize: ptr(int64(3)), LaunchTemplate: &eksv1.LaunchTemplate{ID: ptr("lt-1"), Version: ptr(int64(1))}},
				{NodegroupName: "ng-b", DesiredSize: ptr(int64(2)), Labels: ptr(map[string]string{"tier": "web"})},
			}),
		}
	}
	applied := base()
	upstream := base()
	upstream.PrivateAccess = ptr(true)                       // 11:01, console
	(*upstream.NodeGroups)[0].DesiredSize = ptr(int64(5))    // console
	upstream.Subnets = ptr([]string{"subnet-1", "subnet-2"}) // reported, never adopted
	config := base()
	config.Tags = ptr(map[string]string{"team": "a", "cost": "42"}) // 11:03, clustersync
	(*config.NodeGroups)[1].Labels = ptr(map[string]string{"tier": "api"})

	plan := managed.Reconcile(config, upstream, applied, ManagedOptions())
	var push, adopt []string
	for _, c := range OrderUpdates(plan.Push) {
		push = append(push, c.Path)
	}
	for _, c := range plan.Adopt {
		adopt = append(adopt, c.Path)
	}
	if want := []string{"tags", "nodeGroups[ng-b].labels"}; !reflect.DeepEqual(push, want) {
		t.Errorf("push = %v, want %v", push, want)
	}
	if want := []string{"privateAccess", "nodeGroups[ng-a].desiredSize"}; !reflect.DeepEqual(adopt, want) {
		t.Errorf("adopt = %v, want %v", adopt, want)
	}
	if len(plan.Conflicts) != 0 {
		t.Errorf("conflicts = %+v", plan.Conflicts)
	}
	got := plan.Config
	if !*got.PrivateAccess || *(*got.NodeGroups)[0].DesiredSize != 5 || (*got.Tags)["cost"] != "42" ||
		(*(*got.NodeGroups)[1].Labels)["tier"] != "api" || len(*got.Subnets) != 1 {
		t.Errorf("config after the plan = %+v", got)
	}
	// The effective state shows the user's tags and the console's endpoint.
	eff := managed.Effective(plan.Config, upstream, ManagedOptions())
	if !*eff.PrivateAccess || (*eff.Tags)["cost"] != "42" || *(*eff.NodeGroups)[0].LaunchTemplate.ID != "lt-1" {
		t.Errorf("effective = %+v", eff)
	}
}
