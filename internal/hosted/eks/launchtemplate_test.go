package eks_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
)

// Node groups without a launch template of their own run on a version of
// the managed launch template; changing its fields rolls out a new version
// (one CreateLaunchTemplateVersion, one UpdateNodegroupVersion), and the
// replaced version is deleted once the node group no longer uses it.
func TestLaunchTemplateChangeRollsNewVersion(t *testing.T) {
	t.Parallel()
	key, srv, clk, r := activeCluster(t)
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	id := c.Status.ManagedLaunchTemplateID
	lt, ok := srv.LaunchTemplate(id)
	if !ok || lt.Name != eks.ManagedLaunchTemplateName("prod") || lt.Tags[eks.OwnerUIDTag] != string(c.UID) {
		t.Fatalf("managed launch template %q: %+v", id, lt)
	}
	if v := c.Status.ManagedLaunchTemplateVersions; !reflect.DeepEqual(v, map[string]string{"workers": "2"}) {
		t.Fatalf("versions %v", v)
	}
	if d := lt.Versions[2]; d.InstanceType != "t3.large" {
		t.Errorf("version 2 data %+v", d)
	}
	if ng := mustCluster(t, srv).Nodegroups["workers"]; len(ng.InstanceTypes) != 0 {
		t.Errorf("CreateNodegroup set instance types %v next to the template", ng.InstanceTypes)
	}

	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		ng := &(*s.NodeGroups)[0]
		disk, key, data := int64(50), "ops", "#!/bin/sh\necho hello\n"
		ng.DiskSize, ng.Ec2SshKey, ng.UserData = &disk, &key, &data
		ng.ResourceTags = &map[string]string{"cost": "42"}
	})
	before := srv.Calls()
	var sequence []string
	c = until(t, r, clk, key, 6*time.Minute, 8, func(c eksv1.EKSClusterConfig) bool {
		return c.Status.Phase == eksv1.PhaseActive && len(c.Status.TemplateVersionsToDelete) == 0
	})
	after := srv.Calls()
	for _, op := range []string{"CreateLaunchTemplateVersion", "UpdateNodegroupVersion", "DeleteLaunchTemplateVersions", "CreateLaunchTemplate"} {
		for range after[op] - before[op] {
			sequence = append(sequence, op)
		}
	}
	if want := []string{"CreateLaunchTemplateVersion", "UpdateNodegroupVersion", "DeleteLaunchTemplateVersions"}; !slices.Equal(sequence, want) {
		t.Errorf("calls %v, want %v", sequence, want)
	}
	if c.Status.FailureMessage != "" || !reflect.DeepEqual(c.Status.ManagedLaunchTemplateVersions, map[string]string{"workers": "3"}) {
		t.Errorf("status %+v", c.Status)
	}
	lt, _ = srv.LaunchTemplate(id)
	d3 := lt.Versions[3]
	if _, old := lt.Versions[2]; old || d3.VolumeSize != 50 || d3.KeyName != "ops" || d3.UserData != "#!/bin/sh\necho hello\n" ||
		d3.InstanceType != "t3.large" || d3.ResourceTags["instance"]["cost"] != "42" {
		t.Errorf("template versions %+v", lt.Versions)
	}
	snap := mustCluster(t, srv)
	if u := snap.Updates[len(snap.Updates)-1]; u.Nodegroup != "workers" || u.Params["LaunchTemplateVersion"] != "3" || u.Status != "Successful" {
		t.Errorf("last update %+v", u)
	}
	// In sync: another pass changes nothing.
	before = srv.Calls()
	reconcile(t, r, key)
	if w := writes(before, srv.Calls()); len(w) != 0 || srv.Calls()["CreateLaunchTemplateVersion"] != after["CreateLaunchTemplateVersion"] {
		t.Errorf("pass after the rollout wrote %v", w)
	}
}
