package gke

import (
	"context"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// What GKE reports for a cluster created from the example's spec reads
// back as that spec: UpstreamSpec is the inverse of the create call
// (createCluster), through the real client and the emulator, so that a
// new cluster starts with nothing to push and nothing to adopt.
func TestUpstreamSpecRoundTrip(t *testing.T) {
	spec := *hostedtest.Example(t, "gke-cluster").Spec.GKEConfig
	if err := ValidateCreate(spec); err != nil {
		t.Fatalf("the example does not validate: %v", err)
	}
	srv := gketest.New(gketest.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := NewClientsFactory(srv.URL, StaticCredentials("token"))(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Clusters.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: parent(spec), Cluster: createCluster(spec)}); err != nil {
		t.Fatal(err)
	}
	cl, err := cs.Clusters.GetCluster(ctx, &containerpb.GetClusterRequest{Name: clusterName(spec)})
	if err != nil {
		t.Fatal(err)
	}
	up := UpstreamSpec(spec, nil, cl)
	plan := managed.Reconcile(spec, up, gkev1.GKEClusterConfigSpec{}, ManagedOptions())
	if len(plan.Push)+len(plan.Adopt)+len(plan.Conflicts) != 0 {
		t.Errorf("spec and upstream differ: push %+v adopt %+v conflicts %+v", plan.Push, plan.Adopt, plan.Conflicts)
	}
	if r := reading(spec, nil, cl); r.Endpoint == "" || r.CACert == "" || r.Version == "" {
		t.Errorf("reading: endpoint %q, CA %d bytes, version %q; want all three", r.Endpoint, len(r.CACert), r.Version)
	}
}

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
