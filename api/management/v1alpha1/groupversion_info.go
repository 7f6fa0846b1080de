// Package v1alpha1 holds the management.clustersync.io/v1alpha1 API:
// Cluster, the cluster-scoped object a user creates to have clustersync
// manage a hosted cloud cluster (today Amazon EKS, through spec.eksConfig).
//
// The management controller turns spec.eksConfig into an
// eks.clustersync.io/v1 EKSClusterConfig for the EKS operator, refreshes
// status.eksStatus.upstreamSpec from the cloud, and keeps the managed fields
// (the non-nil ones of spec.eksConfig) in sync with the cloud as
// https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters describes, without its race window (status.appliedSpec).
//
// +kubebuilder:object:generate=true
// +groupName=management.clustersync.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of this package:
	// management.clustersync.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "management.clustersync.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types (Cluster and
	// ClusterList) with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme, for clients and
	// managers that read or write Cluster objects.
	AddToScheme = SchemeBuilder.AddToScheme
)
