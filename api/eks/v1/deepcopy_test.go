package v1

import (
	"reflect"
	"testing"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

func ptr[T any](v T) *T { return &v }

// fullSpec returns an EKSClusterConfigSpec with every field set, node
// groups included; each call builds new maps, slices and pointers.
func fullSpec() *EKSClusterConfigSpec {
	ng := func(name string) NodeGroup {
		return NodeGroup{
			NodegroupName: name,
			DesiredSize:   ptr(int64(3)), MinSize: ptr(int64(1)), MaxSize: ptr(int64(5)), DiskSize: ptr(int64(40)),
			InstanceType:         ptr("t3.medium"),
			Labels:               ptr(map[string]string{"role": "worker"}),
			Tags:                 ptr(map[string]string{"team": "a"}),
			ResourceTags:         ptr(map[string]string{"cost": "1"}),
			Ec2SshKey:            ptr("key"),
			Subnets:              ptr([]string{"subnet-1"}),
			Version:              ptr("1.32"),
			LaunchTemplate:       &LaunchTemplate{Name: ptr("lt"), ID: ptr("lt-1"), Version: ptr(int64(2))},
			RequestSpotInstances: ptr(true),
			SpotInstanceTypes:    ptr([]string{"t3.large"}),
			UserData:             ptr("#!/bin/sh"),
			NodeRole:             ptr("arn:aws:iam::1:role/node"),
			ImageID:              ptr("ami-1"),
			GPU:                  ptr(false),
			Arm:                  ptr(false),
		}
	}
	return &EKSClusterConfigSpec{
		DisplayName: "prod", AmazonCredentialSecret: "clustersync-global-data:aws", Region: "us-west-2", Imported: true,
		KubernetesVersion:   ptr("1.32"),
		Tags:                ptr(map[string]string{"env": "prod"}),
		SecretsEncryption:   ptr(true),
		KMSKey:              ptr("arn:aws:kms:us-west-2:1:key/k"),
		PublicAccess:        ptr(true),
		PrivateAccess:       ptr(false),
		PublicAccessSources: ptr([]string{"0.0.0.0/0"}),
		LoggingTypes:        ptr([]string{"api", "audit"}),
		Subnets:             ptr([]string{"subnet-1", "subnet-2"}),
		SecurityGroups:      ptr([]string{"sg-1"}),
		ServiceRole:         ptr("role"),
		EBSCSIDriver:        ptr(true),
		IPFamily:            ptr("ipv4"),
		NodeGroups:          ptr([]NodeGroup{ng("ng-a"), ng("ng-b")}),
	}
}

// nilFields returns the nil pointer fields of a struct, by Go name.
func nilFields(v any) []string {
	var out []string
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		if rv.Field(i).Kind() == reflect.Pointer && rv.Field(i).IsNil() {
			out = append(out, rv.Type().Field(i).Name)
		}
	}
	return out
}

func TestFullSpecIsFull(t *testing.T) {
	s := fullSpec()
	if n := nilFields(s); len(n) > 0 {
		t.Errorf("fullSpec leaves fields nil, add them: %v", n)
	}
	if n := nilFields(&(*s.NodeGroups)[0]); len(n) > 0 {
		t.Errorf("fullSpec leaves node group fields nil, add them: %v", n)
	}
	if n := nilFields((*s.NodeGroups)[0].LaunchTemplate); len(n) > 0 {
		t.Errorf("fullSpec leaves launch template fields nil, add them: %v", n)
	}
}

// DeepCopy shares nothing with its source: every pointer, map and slice,
// down to the node groups' labels and launch templates, is new.
func TestDeepCopyIsDeep(t *testing.T) {
	orig := fullSpec()
	c := orig.DeepCopy()
	if !reflect.DeepEqual(c, orig) {
		t.Fatal("the copy differs from the original")
	}

	*c.KubernetesVersion = "1.33"
	(*c.Tags)["env"] = "changed"
	(*c.Tags)["new"] = "x"
	(*c.LoggingTypes)[0] = "scheduler"
	*c.PublicAccess = false
	g := &(*c.NodeGroups)[0]
	g.NodegroupName = "renamed"
	*g.DesiredSize = 9
	(*g.Labels)["role"] = "changed"
	(*g.Subnets)[0] = "subnet-9"
	*g.LaunchTemplate.Version = 7
	*g.LaunchTemplate.ID = "lt-9"
	*c.NodeGroups = append(*c.NodeGroups, NodeGroup{NodegroupName: "ng-c"})

	if !reflect.DeepEqual(orig, fullSpec()) {
		t.Errorf("mutating the copy changed the original:\n%+v", orig)
	}
	if len(*orig.NodeGroups) != 2 {
		t.Errorf("original has %d node groups after an append to the copy", len(*orig.NodeGroups))
	}
}

// A nil pointer (unmanaged) stays nil, and a pointer to an empty map or
// list (managed, empty) stays a pointer to an empty map or list.
func TestDeepCopyKeepsNilAndEmpty(t *testing.T) {
	orig := &EKSClusterConfigSpec{Region: "us-west-2", Tags: ptr(map[string]string{}), NodeGroups: ptr([]NodeGroup{})}
	c := orig.DeepCopy()
	if c.Tags == nil || *c.Tags == nil || len(*c.Tags) != 0 {
		t.Errorf("empty managed tags copied as %#v", c.Tags)
	}
	if c.NodeGroups == nil || *c.NodeGroups == nil || len(*c.NodeGroups) != 0 {
		t.Errorf("empty managed node groups copied as %#v", c.NodeGroups)
	}
	if c.KubernetesVersion != nil || c.Subnets != nil || c.LoggingTypes != nil {
		t.Error("an unmanaged (nil) field became non-nil in the copy")
	}
}

func TestEKSClusterConfigDeepCopyObject(t *testing.T) {
	orig := &EKSClusterConfig{Spec: *fullSpec(), Status: EKSClusterConfigStatus{
		OperatorStatus: hostedv1.OperatorStatus{Phase: PhaseActive}, Subnets: []string{"s"}, ManagedLaunchTemplateVersions: map[string]string{"ng-a": "1"},
		CompletedUpdateIDs: []string{"u1"},
	}}
	orig.Name = "prod"
	c := orig.DeepCopyObject().(*EKSClusterConfig)
	c.Status.ManagedLaunchTemplateVersions["ng-a"] = "2"
	c.Status.CompletedUpdateIDs[0] = "u2"
	(*c.Spec.Tags)["env"] = "x"
	if orig.Status.ManagedLaunchTemplateVersions["ng-a"] != "1" || orig.Status.CompletedUpdateIDs[0] != "u1" || (*orig.Spec.Tags)["env"] != "prod" {
		t.Error("mutating the copied object changed the original")
	}
}
