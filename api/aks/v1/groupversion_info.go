// Package v1 holds the aks.clustersync.io/v1 API: AKSClusterConfig, the
// object the AKS operator reconciles into an Azure Kubernetes Service
// managed cluster. The management controller creates one per management
// Cluster that has spec.aksConfig, in namespace clustersync-global-data,
// and owns it.
//
// The field names and meanings follow Rancher's AKS integration
// (https://github.com/rancher/aks-operator): every field of
// AKSClusterConfigSpec is a pointer except resourceGroup,
// resourceLocation, clusterName, imported and azureCredentialSecret, and a
// nil pointer means the field is not managed — clustersync neither sets
// nor reverts it in the cloud
// (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters).
//
// +kubebuilder:object:generate=true
// +groupName=aks.clustersync.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

var (
	// GroupVersion is the API group and version of this package:
	// aks.clustersync.io/v1.
	GroupVersion = schema.GroupVersion{Group: "aks.clustersync.io", Version: "v1"}

	// SchemeBuilder registers this package's types (AKSClusterConfig and
	// AKSClusterConfigList) with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme, for clients and
	// managers that read or write AKSClusterConfig objects.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Namespace is the namespace the management controller creates
// AKSClusterConfig objects in (Rancher's cattle-global-data).
const Namespace = hostedv1.Namespace
