package aks

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

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

// A cluster PUT changes only the pushed fields of what this pass read.
func TestUpdateClusterChangesOnlyPushedFields(t *testing.T) {
	mc := &armcontainerservice.ManagedCluster{ETag: to.Ptr("e1"), Properties: &armcontainerservice.ManagedClusterProperties{
		KubernetesVersion: to.Ptr("1.31"), DNSPrefix: to.Ptr("p"),
		APIServerAccessProfile: &armcontainerservice.ManagedClusterAPIServerAccessProfile{AuthorizedIPRanges: []*string{to.Ptr("1.2.3.4/32")}},
		AddonProfiles:          map[string]*armcontainerservice.ManagedClusterAddonProfile{addonHTTPRouting: {Enabled: to.Ptr(true)}},
	}}
	target := aksv1.AKSClusterConfigSpec{KubernetesVersion: to.Ptr("1.32"), AuthorizedIPRanges: &[]string{}, HTTPApplicationRouting: to.Ptr(false)}
	out := updateCluster("sub", mc, target, []string{"kubernetesVersion"})
	if *out.Properties.KubernetesVersion != "1.32" || len(out.Properties.APIServerAccessProfile.AuthorizedIPRanges) != 1 || !*out.Properties.AddonProfiles[addonHTTPRouting].Enabled {
		t.Errorf("update of kubernetesVersion changed other fields: %+v", out.Properties)
	}
	if *mc.Properties.KubernetesVersion != "1.31" {
		t.Error("updateCluster changed the GET it was built from")
	}
	out = updateCluster("sub", mc, target, []string{"authorizedIpRanges", "httpApplicationRouting"})
	if *out.Properties.KubernetesVersion != "1.31" || len(out.Properties.APIServerAccessProfile.AuthorizedIPRanges) != 0 || *out.Properties.AddonProfiles[addonHTTPRouting].Enabled {
		t.Errorf("update of ranges and routing: %+v", out.Properties)
	}
	if len(mc.Properties.APIServerAccessProfile.AuthorizedIPRanges) != 1 || !*mc.Properties.AddonProfiles[addonHTTPRouting].Enabled {
		t.Error("updateCluster changed the GET it was built from")
	}
}

func TestValidateCreate(t *testing.T) {
	ok := aksv1.AKSClusterConfigSpec{KubernetesVersion: to.Ptr("1.31"), DNSPrefix: to.Ptr("p"), NodePools: &[]aksv1.AKSNodePool{systemPool("sys")}}
	if err := ValidateCreate(ok); err != nil {
		t.Errorf("valid spec: %v", err)
	}
	bad := aksv1.AKSClusterConfigSpec{NodePools: &[]aksv1.AKSNodePool{{Name: "u", Mode: to.Ptr("User"), EnableAutoScaling: to.Ptr(true)}}}
	err := ValidateCreate(bad)
	for _, want := range []string{"spec.kubernetesVersion", "spec.dnsPrefix", "mode System", "spec.nodePools[u].vmSize", "spec.nodePools[u]: an autoscaled pool needs minCount and maxCount"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateCreate error %v, want it to name %q", err, want)
		}
	}
}
