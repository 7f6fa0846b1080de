// Package v1 holds the eks.clustersync.io/v1 API: EKSClusterConfig, the
// object the EKS operator reconciles into an Amazon EKS cluster. The
// management controller creates one per management Cluster that has
// spec.eksConfig, in namespace clustersync-global-data, and owns it.
//
// The field meanings follow Rancher's EKS integration (Rancher's EKS driver, https://github.com/rancher/eks-operator):
// every field of EKSClusterConfigSpec is a pointer except displayName, region,
// imported and amazonCredentialSecret, and a nil pointer means the field is
// not managed — clustersync neither sets nor reverts it in the cloud
// (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters).
//
// +kubebuilder:object:generate=true
// +groupName=eks.clustersync.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

var (
	// GroupVersion is the API group and version of this package:
	// eks.clustersync.io/v1.
	GroupVersion = schema.GroupVersion{Group: "eks.clustersync.io", Version: "v1"}

	// SchemeBuilder registers this package's types (EKSClusterConfig and
	// EKSClusterConfigList) with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme, for clients and
	// managers that read or write EKSClusterConfig objects.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Namespace is the namespace the management controller creates
// EKSClusterConfig objects in (Rancher's cattle-global-data).
const Namespace = hostedv1.Namespace
