package clouds

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
)

// schemaGVK is the operator object kind of the cloud with key, e.g.
// eks.clustersync.io/v1 EKSClusterConfig.
func schemaGVK(key string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: key + ".clustersync.io", Version: "v1", Kind: strings.ToUpper(key) + "ClusterConfig"}
}

func emptyEKS() *eksv1.EKSClusterConfigSpec { return &eksv1.EKSClusterConfigSpec{} }
func emptyAKS() *aksv1.AKSClusterConfigSpec { return &aksv1.AKSClusterConfigSpec{} }
func emptyGKE() *gkev1.GKEClusterConfigSpec { return &gkev1.GKEClusterConfigSpec{} }
