package eks_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// lastUpdate returns the last update EKS recorded for node group ng.
func lastUpdate(t *testing.T, srv *ekstest.Server, ng string) ekstest.UpdateSnapshot {
	t.Helper()
	snap := mustCluster(t, srv)
	for i := len(snap.Updates) - 1; i >= 0; i-- {
		if snap.Updates[i].Nodegroup == ng {
			return snap.Updates[i]
		}
	}
	t.Fatalf("no update of node group %s", ng)
	return ekstest.UpdateSnapshot{}
}

// appliedValue is the operator's applied value at path, as JSON.
func appliedValue(t *testing.T, key types.NamespacedName, path string) string {
	t.Helper()
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	if c.Status.AppliedSpec == nil {
		return "<none>"
	}
	v, err := managed.Value(*c.Status.AppliedSpec, path, eks.ManagedOptions())
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// A field of the managed launch template edited twice while the first
// change rolls out: the node group ends on a template version with the
// last value, and that value is the applied one.
func TestRapidTemplateEdits(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	for _, size := range []int64{50, 60} {
		editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { (*s.NodeGroups)[0].DiskSize = &size })
		reconcile(t, r, key)
		clk.Advance(time.Minute) // the first rollout takes five
	}
	untilActive(t, key, srv, clk, r)
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	version := c.Status.ManagedLaunchTemplateVersions["workers"]
	lt, _ := srv.LaunchTemplate(c.Status.ManagedLaunchTemplateID)
	n, _ := strconv.ParseInt(version, 10, 64)
	if d := lt.Versions[n]; d.VolumeSize != 60 {
		t.Errorf("node group on template version %s with disk size %d, want 60", version, d.VolumeSize)
	}
	if u := lastUpdate(t, srv, "workers"); u.Status != ekstest.UpdateSuccessful || u.Params["LaunchTemplateVersion"] != version {
		t.Errorf("last node group update %+v, want template version %s", u, version)
	}
	if got := appliedValue(t, key, "nodeGroups[workers].diskSize"); got != "60" {
		t.Errorf("applied diskSize %s, want 60", got)
	}
	if len(c.Status.PendingUpdates) != 0 || c.Status.FailureMessage != "" {
		t.Errorf("status %+v", c.Status)
	}
}

// A node group on a launch template of the user's: its version edited
// twice while the first update runs ends on the last version.
func TestRapidUserTemplateVersion(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	cs, err := eks.NewClientsFactory(srv.URL)(context.Background(), "us-west-2", map[string][]byte{eks.AccessKeyField: []byte("a"), eks.SecretKeyField: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := &ec2types.RequestLaunchTemplateData{InstanceType: ec2types.InstanceTypeM5Large}
	created, err := cs.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("custom"), LaunchTemplateData: data})
	if err != nil {
		t.Fatal(err)
	}
	id := created.LaunchTemplate.LaunchTemplateId
	for range 2 { // versions 2 and 3
		if _, err := cs.EC2.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: id, LaunchTemplateData: data}); err != nil {
			t.Fatal(err)
		}
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		one, role := int64(1), "arn:aws:iam::123456789012:role/nodes"
		*s.NodeGroups = append(*s.NodeGroups, eksv1.NodeGroup{NodegroupName: "custom", DesiredSize: &one, MinSize: &one, MaxSize: &one,
			NodeRole: &role, LaunchTemplate: &eksv1.LaunchTemplate{ID: id, Version: &one}})
	})
	untilActive(t, key, srv, clk, r)
	clk.Advance(11 * time.Minute) // created
	for _, v := range []int64{2, 3} {
		editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { (*s.NodeGroups)[1].LaunchTemplate.Version = &v })
		reconcile(t, r, key)
		clk.Advance(time.Minute)
	}
	untilActive(t, key, srv, clk, r)
	if u := lastUpdate(t, srv, "custom"); u.Status != ekstest.UpdateSuccessful || u.Params["LaunchTemplateVersion"] != "3" {
		t.Errorf("last update of node group custom %+v, want launch template version 3", u)
	}
	if got := appliedValue(t, key, "nodeGroups[custom].launchTemplate"); !managed.SameValue([]byte(got), []byte(`{"id":"`+aws.ToString(id)+`","version":3}`)) {
		t.Errorf("applied launchTemplate %s, want version 3", got)
	}
}
