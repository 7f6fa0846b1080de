package aks

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// What AKS reports for a cluster created from the example's spec reads
// back as that spec: UpstreamSpec is the inverse of the create PUT
// (createCluster), through the real SDK and the emulator, so that a new
// cluster starts with nothing to push and nothing to adopt.
func TestUpstreamSpecRoundTrip(t *testing.T) {
	spec := *hostedtest.Example(t, "aks-cluster").Spec.AKSConfig
	srv := akstest.New(akstest.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := NewClientsFactory(srv.URL, SecretAsToken)(ctx, map[string][]byte{SubscriptionIDField: []byte("00000000-0000-0000-0000-0000000000aa"), ClientSecretField: []byte("token")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceGroups.CreateOrUpdate(ctx, spec.ResourceGroup, armresources.ResourceGroup{Location: to.Ptr(spec.ResourceLocation)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ValidateCreate(spec); err != nil {
		t.Fatalf("the example does not validate: %v", err)
	}
	poller, err := cs.ManagedClusters.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, createCluster(cs.SubscriptionID, spec, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, nil); err != nil {
		t.Fatal(err)
	}
	out, err := cs.ManagedClusters.Get(ctx, spec.ResourceGroup, spec.ClusterName, nil)
	if err != nil {
		t.Fatal(err)
	}
	up := UpstreamSpec(spec, &out.ManagedCluster)
	plan := managed.Reconcile(spec, up, aksv1.AKSClusterConfigSpec{}, ManagedOptions())
	if len(plan.Push)+len(plan.Adopt)+len(plan.Conflicts) != 0 {
		t.Errorf("spec and upstream differ: push %+v adopt %+v conflicts %+v", plan.Push, plan.Adopt, plan.Conflicts)
	}
	if up.NetworkPlugin == nil || up.PodCIDR == nil && up.ServiceCIDR == nil {
		t.Errorf("fields AKS reports but the spec left unset are missing from upstream: %+v", up)
	}
}

// The upstream spec of an autoscaled pool carries the config's count, so
// the autoscaler's moves are neither pushed nor adopted.
func TestUpstreamSpecAutoscaledCount(t *testing.T) {
	mc := &armcontainerservice.ManagedCluster{Properties: &armcontainerservice.ManagedClusterProperties{
		KubernetesVersion: to.Ptr("1.31"),
		AgentPoolProfiles: []*armcontainerservice.ManagedClusterAgentPoolProfile{
			{Name: to.Ptr("auto"), Count: to.Ptr(int32(4)), EnableAutoScaling: to.Ptr(true), MinCount: to.Ptr(int32(1)), MaxCount: to.Ptr(int32(5))},
			{Name: to.Ptr("fixed"), Count: to.Ptr(int32(3))},
		}}}
	config := aksv1.AKSClusterConfigSpec{ClusterName: "c", NodePools: &[]aksv1.AKSNodePool{{Name: "auto", Count: to.Ptr(int32(2))}}}
	up := UpstreamSpec(config, mc)
	counts := map[string]*int32{}
	for _, p := range *up.NodePools {
		counts[p.Name] = p.Count
	}
	if c := counts["auto"]; c == nil || *c != 2 {
		t.Errorf("autoscaled pool count %v, want the config's 2", c)
	}
	if c := counts["fixed"]; c == nil || *c != 3 {
		t.Errorf("fixed pool count %v, want Azure's 3", c)
	}
	if up.ClusterName != "c" || up.Tags == nil || len(*up.Tags) != 0 || up.AuthorizedIPRanges == nil || up.PrivateCluster == nil || *up.PrivateCluster {
		t.Errorf("upstream identity/defaults: %+v", up)
	}
}
