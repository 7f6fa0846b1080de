package gke

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/api/googleapi"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

func TestAtPrecision(t *testing.T) {
	for _, tt := range []struct{ version, like, want string }{
		{"1.31.5-gke.1000000", "1.31", "1.31"},
		{"1.31.5-gke.1000000", "1.31.2", "1.31.5"},
		{"1.31.5-gke.1000000", "1.31.5-gke.900", "1.31.5-gke.1000000"},
		{"1.31.5-gke.1000000", "", "1.31.5-gke.1000000"},
		{"1.32.1-gke.7", "1.31", "1.32"},
	} {
		if got := AtPrecision(tt.version, tt.like); got != tt.want {
			t.Errorf("AtPrecision(%q, %q) = %q, want %q", tt.version, tt.like, got, tt.want)
		}
	}
}

func TestNextVersion(t *testing.T) {
	for _, tt := range []struct{ current, desired, want, err string }{
		{"1.31.5-gke.1000", "1.32", "1.32", ""},
		{"1.31.5-gke.1000", "1.33", "1.32", ""},
		{"1.31.5-gke.1000", "1.31", "", ""},
		{"1.31.5-gke.1000", "1.31.5-gke.1200", "1.31.5-gke.1200", ""},
		{"1.31.5-gke.1000", "1.32.1-gke.5", "1.32.1-gke.5", ""},
		{"1.31.5-gke.1000", "1.30", "", "GKE cannot downgrade"},
	} {
		got, err := nextVersion(tt.current, tt.desired)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("nextVersion(%q, %q) = %q, %v; want %q, an error containing %q", tt.current, tt.desired, got, err, tt.want, tt.err)
		}
	}
}

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

// The upstream spec reports versions at the config's precision, an
// autoscaled pool's size as the config's, and leaves the node-config
// fields the config leaves empty empty.
func TestUpstreamSpec(t *testing.T) {
	cl := &containerpb.Cluster{Name: "c", CurrentMasterVersion: "1.31.5-gke.1000", ResourceLabels: map[string]string{"team": "a"},
		LoggingService: DefaultLoggingService, Locations: []string{"us-central1-a"},
		NodePools: []*containerpb.NodePool{
			{Name: "auto", Version: "1.31.5-gke.1000", InitialNodeCount: 4, Autoscaling: &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 5},
				Config: &containerpb.NodeConfig{MachineType: "e2-medium", DiskSizeGb: 100, ImageType: "COS_CONTAINERD"}},
			{Name: "fixed", Version: "1.31.5-gke.1000", InitialNodeCount: 3, Config: &containerpb.NodeConfig{MachineType: "e2-medium", DiskSizeGb: 100}},
			{Name: "going", Status: containerpb.NodePool_STOPPING},
		}}
	config := gkev1.GKEClusterConfigSpec{ProjectID: "p", Zone: "us-central1-a", ClusterName: "c", KubernetesVersion: ptr.To("1.31"),
		NodePools: &[]gkev1.GKENodePoolConfig{{Name: "auto", InitialNodeCount: ptr.To(int64(2)), Config: &gkev1.GKENodeConfig{MachineType: "e2-medium"}}}}
	up := UpstreamSpec(config, nil, cl)
	if up.ProjectID != "p" || up.Zone != "us-central1-a" || *up.KubernetesVersion != "1.31" || (*up.Labels)["team"] != "a" {
		t.Errorf("identity, version or labels: %+v", up)
	}
	ps := *up.NodePools
	if len(ps) != 2 {
		t.Fatalf("pools %+v, want auto and fixed (a STOPPING pool is being deleted)", ps)
	}
	if *ps[0].InitialNodeCount != 2 || *ps[1].InitialNodeCount != 3 {
		t.Errorf("sizes %d, %d; want the config's 2 for the autoscaled pool, GKE's 3 for the other", *ps[0].InitialNodeCount, *ps[1].InitialNodeCount)
	}
	if c := ps[0].Config; c.MachineType != "e2-medium" || c.DiskSizeGb != 0 || c.ImageType != "" {
		t.Errorf("config of auto %+v: want only the machine type the config sets", c)
	}
	if c := ps[1].Config; c.DiskSizeGb != 100 || *ps[1].Version != "1.31.5-gke.1000" {
		t.Errorf("pool fixed is not in the config: want all GKE reports, got %+v version %s", c, *ps[1].Version)
	}
}

// Busy is read from the statuses, of the cluster or any pool; waiting
// errors are classified by reason, never by message.
func TestBusyAndWaiting(t *testing.T) {
	if busy, why := Busy(&containerpb.Cluster{Status: containerpb.Cluster_RUNNING, NodePools: []*containerpb.NodePool{{Name: "a", Status: containerpb.NodePool_RECONCILING}}}); !busy || why != "pool a is RECONCILING" {
		t.Errorf("Busy = %v %q", busy, why)
	}
	if busy, _ := Busy(&containerpb.Cluster{Status: containerpb.Cluster_RUNNING}); busy {
		t.Error("a RUNNING cluster is busy")
	}
	for _, tt := range []struct {
		name      string
		err       error
		wait, try bool
	}{
		{"busy", &googleapi.Error{Code: 400, Message: "anything", Errors: []googleapi.ErrorItem{{Reason: "failedPrecondition"}}}, true, true},
		{"bad request", &googleapi.Error{Code: 400, Message: "Cluster is running incompatible operation", Errors: []googleapi.ErrorItem{{Reason: "badRequest"}}}, false, false},
		{"stale etag", &googleapi.Error{Code: http.StatusConflict, Errors: []googleapi.ErrorItem{{Reason: "aborted"}}}, true, true},
		{"exists", &googleapi.Error{Code: http.StatusConflict, Errors: []googleapi.ErrorItem{{Reason: "alreadyExists"}}}, false, false},
		{"throttled", &googleapi.Error{Code: http.StatusTooManyRequests}, false, true},
		{"other", errors.New("boom"), false, false},
	} {
		if w, r := waiting(tt.err), Retryable(tt.err); w != tt.wait || r != tt.try {
			t.Errorf("%s: waiting %v retryable %v, want %v %v", tt.name, w, r, tt.wait, tt.try)
		}
	}
}
