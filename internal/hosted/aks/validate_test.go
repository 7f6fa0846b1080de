package aks

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
)

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
