package gke

import (
	"slices"
	"strings"
	"testing"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

func TestVet(t *testing.T) {
	spec := gkev1.GKEClusterConfigSpec{NodePools: &[]gkev1.GKENodePoolConfig{{Name: "fixed"},
		{Name: "auto", Autoscaling: &gkev1.GKENodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 3}},
		{Name: "bad", Autoscaling: &gkev1.GKENodePoolAutoscaling{Enabled: true, MinNodeCount: 4, MaxNodeCount: 2}}}}
	autopilot := gkev1.GKEClusterConfigSpec{AutopilotConfig: &gkev1.GKEAutopilotConfig{Enabled: true}}
	cfg := gkev1.GKENodeConfig{MachineType: "e2-medium", ImageType: "COS_CONTAINERD", Labels: map[string]string{"a": "1"}}
	relabelled, resized := cfg, cfg
	relabelled.Labels, relabelled.ImageType = map[string]string{"a": "2"}, "UBUNTU_CONTAINERD"
	resized.MachineType, resized.DiskSizeGb = "e2-standard-4", 200
	for _, tt := range []struct {
		name string
		spec gkev1.GKEClusterConfigSpec
		ch   managed.Change
		push bool
		err  string
	}{
		{"labels", spec, managed.Change{Path: "labels"}, true, ""},
		{"upgrade", spec, managed.Change{Path: "kubernetesVersion", Old: "1.31", New: "1.32"}, true, ""},
		{"downgrade", spec, managed.Change{Path: "kubernetesVersion", Old: "1.31.5-gke.100", New: "1.30"}, false, "kubernetesVersion: kubernetes version 1.31.5 → 1.30: GKE cannot downgrade"},
		{"network", spec, managed.Change{Path: "network", Old: "default", New: "other"}, false, `network: GKE sets it only when the cluster is created; it is "default" in GKE`},
		{"private", spec, managed.Change{Path: "privateClusterConfig"}, false, "privateClusterConfig: GKE sets it only when the cluster is created"},
		{"max pods", spec, managed.Change{Path: "nodePools[fixed].maxPodsConstraint", Old: int64(110), New: int64(64)}, false, "only when pool fixed is created"},
		{"pool downgrade", spec, managed.Change{Path: "nodePools[fixed].version", Old: "1.31", New: "1.30"}, false, "nodePools[fixed].version"},
		{"node labels and image", spec, managed.Change{Path: "nodePools[fixed].config", Old: cfg, New: relabelled}, true, ""},
		{"machine type", spec, managed.Change{Path: "nodePools[fixed].config", Old: cfg, New: resized}, false, "GKE sets config.diskSizeGb, config.machineType only when pool fixed is created"},
		{"autoscaled size", spec, managed.Change{Path: "nodePools[auto].initialNodeCount", Old: int64(4), New: int64(1)}, false, ""},
		{"size", spec, managed.Change{Path: "nodePools[fixed].initialNodeCount", Old: int64(3), New: int64(0)}, true, ""},
		{"bounds", spec, managed.Change{Path: "nodePools[bad].autoscaling"}, false, "nodePools[bad].autoscaling.minNodeCount: 4 exceeds maxNodeCount 2"},
		{"autopilot pools", autopilot, managed.Change{Path: "nodePools[x]", New: gkev1.GKENodePoolConfig{Name: "x"}}, false, "Autopilot"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			push, err := vet(tt.spec, tt.ch)
			if push != tt.push || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("vet = %v, %v; want %v, an error containing %q", push, err, tt.push, tt.err)
			}
		})
	}
}

// Changes go in Rancher's order: the control plane first, labels last of
// the cluster fields, a pool's version before its size, removals last.
func TestOrderUpdates(t *testing.T) {
	var push []managed.Change
	for _, p := range []string{"labels", "nodePools[b]", "nodePools[a].initialNodeCount", "maintenanceWindow", "nodePools[a].version",
		"kubernetesVersion", "nodePools[new]", "nodePools[a].autoscaling", "clusterAddons"} {
		ch := managed.Change{Path: p}
		if p == "nodePools[b]" {
			ch.Old = gkev1.GKENodePoolConfig{Name: "b"}
		}
		push = append(push, ch)
	}
	var got []string
	for _, ch := range OrderUpdates(push) {
		got = append(got, ch.Path)
	}
	want := []string{"kubernetesVersion", "clusterAddons", "maintenanceWindow", "labels", "nodePools[new]", "nodePools[a].version",
		"nodePools[a].autoscaling", "nodePools[a].initialNodeCount", "nodePools[b]"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
