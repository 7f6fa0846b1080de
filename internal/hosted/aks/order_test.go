package aks

import (
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

func systemPool(name string) aksv1.AKSNodePool {
	return aksv1.AKSNodePool{Name: name, Mode: to.Ptr("System"), VMSize: to.Ptr("Standard_D2s_v3")}
}

func TestVet(t *testing.T) {
	spec := aksv1.AKSClusterConfigSpec{NodePools: &[]aksv1.AKSNodePool{systemPool("sys"),
		{Name: "auto", EnableAutoScaling: to.Ptr(true), MinCount: to.Ptr(int32(1)), MaxCount: to.Ptr(int32(3))}}}
	for _, tt := range []struct {
		name string
		spec aksv1.AKSClusterConfigSpec
		ch   managed.Change
		push bool
		err  string
	}{
		{"tags", spec, managed.Change{Path: "tags"}, true, ""},
		{"upgrade", spec, managed.Change{Path: "kubernetesVersion", Old: "1.30", New: "1.31"}, true, ""},
		{"downgrade", spec, managed.Change{Path: "kubernetesVersion", Old: "1.31", New: "1.30"}, false, "kubernetesVersion: kubernetes version 1.31 → 1.30: AKS cannot downgrade"},
		{"network", spec, managed.Change{Path: "networkPlugin", Old: "kubenet", New: "azure"}, false, `networkPlugin: Azure sets it only when the cluster is created; it is "kubenet" in AKS`},
		{"vmSize", spec, managed.Change{Path: "nodePools[sys].vmSize", Old: "a", New: "b"}, false, "nodePools[sys].vmSize: Azure sets it only when pool sys is created"},
		{"zones", spec, managed.Change{Path: "nodePools[sys].availabilityZones"}, false, "nodePools[sys].availabilityZones"},
		{"autoscaled count", spec, managed.Change{Path: "nodePools[auto].count", Old: int32(4), New: int32(2)}, false, ""},
		{"count", spec, managed.Change{Path: "nodePools[sys].count", Old: int32(1), New: int32(2)}, true, ""},
		{"remove a user pool", spec, managed.Change{Path: "nodePools[old]", Old: aksv1.AKSNodePool{Name: "old", Mode: to.Ptr("User")}}, true, ""},
		{"remove a system pool, another left", spec, managed.Change{Path: "nodePools[sys2]", Old: systemPool("sys2")}, true, ""},
		{"remove the last system pool", aksv1.AKSClusterConfigSpec{NodePools: &[]aksv1.AKSNodePool{}},
			managed.Change{Path: "nodePools[sys]", Old: systemPool("sys")}, false, "nodePools[sys]: it is the last System-mode pool"},
		{"bounds", aksv1.AKSClusterConfigSpec{NodePools: &[]aksv1.AKSNodePool{{Name: "p", EnableAutoScaling: to.Ptr(true), MinCount: to.Ptr(int32(5)), MaxCount: to.Ptr(int32(2))}}},
			managed.Change{Path: "nodePools[p].minCount"}, false, "nodePools[p].minCount: 5 exceeds maxCount 2"},
		{"docker bridge", spec, managed.Change{Path: "dockerBridgeCidr"}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			push, err := vet(tt.spec, tt.ch)
			if push != tt.push || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("vet = %v, %v; want %v, an error containing %q", push, err, tt.push, tt.err)
			}
		})
	}
}

// Changes are applied in Rancher's aks-operator order — tags, the
// cluster's fields, pools created or changed, pools removed — one Azure
// call per group: every cluster field in one PUT, every field of a pool in
// one agent-pool PUT.
func TestOrderUpdates(t *testing.T) {
	in := []managed.Change{
		{Path: "nodePools[old]", Old: systemPool("old")},
		{Path: "nodePools[p].count", Old: int32(1), New: int32(2)},
		{Path: "nodePools[new]", New: systemPool("new")},
		{Path: "authorizedIpRanges"},
		{Path: "kubernetesVersion"},
		{Path: "tags"},
	}
	var got []string
	for _, ch := range OrderUpdates(in) {
		got = append(got, ch.Path)
	}
	want := []string{"tags", "authorizedIpRanges", "kubernetesVersion", "nodePools[new]", "nodePools[p].count", "nodePools[old]"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	for path, group := range map[string]string{"kubernetesVersion": "cluster", "authorizedIpRanges": "cluster", "tags": "tags",
		"nodePools[p].count": "nodePools[p]", "nodePools[p].minCount": "nodePools[p]", "nodePools[p]": "nodePools[p]"} {
		if g := callGroup(path); g != group {
			t.Errorf("callGroup(%s) = %s, want %s", path, g, group)
		}
	}
}
