// Package v1 holds the gke.clustersync.io/v1 API: GKEClusterConfig, the
// object the GKE operator reconciles into a Google Kubernetes Engine
// cluster. The management controller creates one per management
// Cluster that has spec.gkeConfig, in namespace clustersync-global-data,
// and owns it.
//
// The field names and meanings follow Rancher's GKE integration
// (https://github.com/rancher/gke-operator): every field of
// GKEClusterConfigSpec is a pointer except projectID, region, zone,
// clusterName, imported and googleCredentialSecret, and a
// nil pointer means the field is not managed — clustersync neither sets
// nor reverts it in the cloud
// (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters).
//
// +kubebuilder:object:generate=true
// +groupName=gke.clustersync.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

var (
	// GroupVersion is the API group and version of this package:
	// gke.clustersync.io/v1.
	GroupVersion = schema.GroupVersion{Group: "gke.clustersync.io", Version: "v1"}

	// SchemeBuilder registers this package's types (GKEClusterConfig and
	// GKEClusterConfigList) with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a scheme, for clients and
	// managers that read or write GKEClusterConfig objects.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Namespace is the namespace the management controller creates
// GKEClusterConfig objects in (Rancher's cattle-global-data).
const Namespace = hostedv1.Namespace
