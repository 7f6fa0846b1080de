package aks

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
)

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
