package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

// GKEClusterConfigSpec is the desired state of one Google Kubernetes
// Engine cluster, with the fields and meanings of Rancher's
// GKEClusterConfigSpec (https://github.com/rancher/gke-operator). The
// management Cluster embeds it as spec.gkeConfig (desired),
// status.gkeStatus.upstreamSpec (what GKE reports) and
// status.gkeStatus.appliedSpec (what clustersync last applied).
//
// projectID, region, zone, clusterName, imported and
// googleCredentialSecret are plain values: they name the cluster and how
// to reach it, and are never taken from the cloud. Every other field is a
// pointer, and nil means unmanaged: clustersync leaves that property of
// the cloud cluster as it is and does not revert changes made elsewhere.
// A non-nil value, even an empty list or map, is managed. A struct field
// (clusterAddons, a pool's config) is managed as a whole. A cluster
// created by clustersync has the fields it was created with set; a
// registered (imported) one starts with every pointer nil.
//
// The same type holds the upstream and applied specs, so the rules that
// only hold for a config (what creation needs) are checked on the Cluster
// and by the GKE operator, not here.
//
// +kubebuilder:validation:XValidation:rule="(has(self.region) && size(self.region) > 0) != (has(self.zone) && size(self.zone) > 0)",message="set exactly one of region (a regional cluster) and zone (a zonal cluster)"
type GKEClusterConfigSpec struct {
	// ProjectID is the Google Cloud project of the cluster.
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`
	ProjectID string `json:"projectID"`

	// Region is the region of a regional cluster, e.g. us-central1; set
	// exactly one of region and zone.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone of a zonal cluster, e.g. us-central1-a; set exactly
	// one of region and zone.
	// +optional
	Zone string `json:"zone,omitempty"`

	// ClusterName is the name of the cluster in GKE (lowercase letters,
	// digits and hyphens, up to 40 characters). It cannot be changed.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`
	ClusterName string `json:"clusterName"`

	// Imported is true for a cluster that existed before clustersync
	// registered it: it is never created and, on deletion, only
	// disconnected (no cloud call). Defaults to false.
	// +optional
	// +kubebuilder:default=false
	Imported bool `json:"imported"`

	// GoogleCredentialSecret references the Secret holding the service
	// account's JSON key, as "namespace:name", under Rancher's key
	// googlecredentialConfig-authEncodedJson.
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+:[a-z0-9.-]+$`
	GoogleCredentialSecret string `json:"googleCredentialSecret"`

	// Description is the cluster's description. Creation only.
	// +optional
	Description *string `json:"description,omitempty"`

	// Labels are the cluster's resource labels. A pointer to a map so that
	// an empty managed map (no labels wanted) differs from nil (labels
	// unmanaged).
	// +optional
	Labels *map[string]string `json:"labels,omitempty"`

	// KubernetesVersion is the control plane's version: "1.31" (any patch
	// of that minor), "1.31.5" or GKE's full "1.31.5-gke.1000000". GKE
	// reports it at the precision it is given in. Upgrades go up one minor
	// version at a time; a downgrade is refused
	// (https://github.com/rancher/gke-operator/pull/714).
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?$`
	// +optional
	KubernetesVersion *string `json:"kubernetesVersion,omitempty"`

	// EnableKubernetesAlpha enables Kubernetes alpha features (the cluster
	// is deleted by GKE after 30 days). Creation only.
	// +optional
	EnableKubernetesAlpha *bool `json:"enableKubernetesAlpha,omitempty"`

	// ClusterAddons are the add-ons GKE runs in the cluster.
	// +optional
	ClusterAddons *GKEClusterAddons `json:"clusterAddons,omitempty"`

	// ClusterIpv4CidrBlock is the CIDR of pod addresses. Creation only.
	// +optional
	ClusterIpv4CidrBlock *string `json:"clusterIpv4Cidr,omitempty"`

	// LoggingService is where the cluster sends logs:
	// logging.googleapis.com/kubernetes or none.
	// +optional
	LoggingService *string `json:"loggingService,omitempty"`

	// MonitoringService is where the cluster sends metrics:
	// monitoring.googleapis.com/kubernetes or none.
	// +optional
	MonitoringService *string `json:"monitoringService,omitempty"`

	// Network is the VPC network of the cluster. Creation only.
	// +optional
	Network *string `json:"network,omitempty"`

	// Subnetwork is the subnetwork of the nodes. Creation only.
	// +optional
	Subnetwork *string `json:"subnetwork,omitempty"`

	// NetworkPolicyEnabled enables network policy enforcement (Calico).
	// +optional
	NetworkPolicyEnabled *bool `json:"networkPolicyEnabled,omitempty"`

	// PrivateClusterConfig makes the nodes, and optionally the API server,
	// private. Creation only. With enablePrivateEndpoint the API server is
	// reachable only from inside the VPC: clustersync reports that it
	// needs a tunnel, as for an EKS private endpoint.
	// +optional
	PrivateClusterConfig *GKEPrivateClusterConfig `json:"privateClusterConfig,omitempty"`

	// IPAllocationPolicy is how pod and service addresses are allocated
	// (VPC-native with alias IPs). Creation only.
	// +optional
	IPAllocationPolicy *GKEIPAllocationPolicy `json:"ipAllocationPolicy,omitempty"`

	// MasterAuthorizedNetworksConfig limits the addresses that reach the
	// API server.
	// +optional
	MasterAuthorizedNetworksConfig *GKEMasterAuthorizedNetworksConfig `json:"masterAuthorizedNetworks,omitempty"`

	// Locations are the zones of the cluster's nodes.
	// +optional
	Locations *[]string `json:"locations,omitempty"`

	// MaintenanceWindow is the start of the daily maintenance window, in
	// UTC, as HH:MM; "" means none.
	// +kubebuilder:validation:Pattern=`^$|^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +optional
	MaintenanceWindow *string `json:"maintenanceWindow,omitempty"`

	// AutopilotConfig makes an Autopilot cluster: GKE manages the nodes,
	// and nodePools must be unset. Creation only.
	// +optional
	AutopilotConfig *GKEAutopilotConfig `json:"autopilotConfig,omitempty"`

	// CustomerManagedEncryptionKey encrypts the boot disks with a Cloud
	// KMS key. Creation only.
	// +optional
	CustomerManagedEncryptionKey *CMEKConfig `json:"customerManagedEncryptionKey,omitempty"`

	// NodePools are the cluster's node pools, keyed by name: clustersync
	// compares and updates them one by one, by name. A pool created
	// outside clustersync is never deleted for being absent from this
	// list unless it was once in it.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	NodePools *[]GKENodePoolConfig `json:"nodePools,omitempty"`
}

// GKEClusterAddons are the add-ons of a cluster; true means enabled.
type GKEClusterAddons struct {
	// HTTPLoadBalancing runs the HTTP(S) load balancing controller.
	// +optional
	HTTPLoadBalancing bool `json:"httpLoadBalancing,omitempty"`
	// HorizontalPodAutoscaling runs the metrics the horizontal pod
	// autoscaler needs.
	// +optional
	HorizontalPodAutoscaling bool `json:"horizontalPodAutoscaling,omitempty"`
	// NetworkPolicyConfig lets network policy be enabled on the nodes.
	// +optional
	NetworkPolicyConfig bool `json:"networkPolicyConfig,omitempty"`
}

// GKEPrivateClusterConfig makes a cluster private.
type GKEPrivateClusterConfig struct {
	// EnablePrivateEndpoint serves the API server on its private address
	// only.
	// +optional
	EnablePrivateEndpoint bool `json:"enablePrivateEndpoint,omitempty"`
	// EnablePrivateNodes gives the nodes private addresses only.
	// +optional
	EnablePrivateNodes bool `json:"enablePrivateNodes,omitempty"`
	// MasterIpv4CidrBlock is the /28 of the control plane's private
	// addresses.
	// +optional
	MasterIpv4CidrBlock string `json:"masterIpv4CidrBlock,omitempty"`
}

// GKEIPAllocationPolicy is how a VPC-native cluster allocates addresses.
type GKEIPAllocationPolicy struct {
	// ClusterIpv4CidrBlock is the CIDR of pod addresses.
	// +optional
	ClusterIpv4CidrBlock string `json:"clusterIpv4CidrBlock,omitempty"`
	// ClusterSecondaryRangeName is the subnetwork's secondary range of pod
	// addresses.
	// +optional
	ClusterSecondaryRangeName string `json:"clusterSecondaryRangeName,omitempty"`
	// CreateSubnetwork has GKE create the subnetwork.
	// +optional
	CreateSubnetwork bool `json:"createSubnetwork,omitempty"`
	// NodeIpv4CidrBlock is the CIDR of a subnetwork GKE creates.
	// +optional
	NodeIpv4CidrBlock string `json:"nodeIpv4CidrBlock,omitempty"`
	// ServicesIpv4CidrBlock is the CIDR of service addresses.
	// +optional
	ServicesIpv4CidrBlock string `json:"servicesIpv4CidrBlock,omitempty"`
	// ServicesSecondaryRangeName is the subnetwork's secondary range of
	// service addresses.
	// +optional
	ServicesSecondaryRangeName string `json:"servicesSecondaryRangeName,omitempty"`
	// SubnetworkName is the name of a subnetwork GKE creates.
	// +optional
	SubnetworkName string `json:"subnetworkName,omitempty"`
	// UseIPAliases makes the cluster VPC-native.
	// +optional
	UseIPAliases bool `json:"useIpAliases,omitempty"`
}

// GKEMasterAuthorizedNetworksConfig limits who reaches the API server.
type GKEMasterAuthorizedNetworksConfig struct {
	// Enabled turns the limit on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// CidrBlocks are the allowed address blocks.
	// +optional
	CidrBlocks []GKECidrBlock `json:"cidrBlocks,omitempty"`
}

// GKECidrBlock is one authorized address block.
type GKECidrBlock struct {
	// CidrBlock is the block, e.g. 10.0.0.0/8.
	CidrBlock string `json:"cidrBlock"`
	// DisplayName names it.
	// +optional
	DisplayName string `json:"displayName,omitempty"`
}

// GKEAutopilotConfig selects Autopilot.
type GKEAutopilotConfig struct {
	// Enabled makes an Autopilot cluster.
	Enabled bool `json:"enabled"`
}

// CMEKConfig names a Cloud KMS key of the cluster's project.
type CMEKConfig struct {
	// KeyName is the key's name.
	KeyName string `json:"keyName"`
	// RingName is the key ring's name.
	RingName string `json:"ringName"`
}

// GKENodePoolConfig is one node pool of a GKE cluster. Every field but the
// name is a pointer, nil meaning unmanaged as for GKEClusterConfigSpec.
type GKENodePoolConfig struct {
	// Name is the pool's name in GKE; it keys the nodePools list.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`
	Name string `json:"name"`

	// Version is the Kubernetes version of the pool's nodes, at most the
	// control plane's, at the precision of kubernetesVersion.
	// +optional
	Version *string `json:"version,omitempty"`

	// InitialNodeCount is the pool's size, in nodes per zone (GKE's v1 API
	// reports no other size; Rancher uses it the same way). It is neither
	// pushed nor adopted while autoscaling is enabled: the autoscaler owns
	// it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	InitialNodeCount *int64 `json:"initialNodeCount,omitempty"`

	// MaxPodsConstraint is the maximum number of pods per node. Creation
	// only.
	// +optional
	MaxPodsConstraint *int64 `json:"maxPodsConstraint,omitempty"`

	// Autoscaling lets the cluster autoscaler size the pool.
	// +optional
	Autoscaling *GKENodePoolAutoscaling `json:"autoscaling,omitempty"`

	// Management is automatic repair and upgrade of the nodes.
	// +optional
	Management *GKENodePoolManagement `json:"management,omitempty"`

	// Config is the nodes' machine configuration. On an existing pool GKE
	// changes imageType, labels, taints and tags only; a change of anything
	// else is refused, naming the field.
	// +optional
	Config *GKENodeConfig `json:"config,omitempty"`
}

// GKENodePoolAutoscaling bounds the autoscaler, in nodes per zone.
type GKENodePoolAutoscaling struct {
	// Enabled turns the autoscaler on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// MinNodeCount is the lower bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinNodeCount int64 `json:"minNodeCount,omitempty"`
	// MaxNodeCount is the upper bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxNodeCount int64 `json:"maxNodeCount,omitempty"`
}

// GKENodePoolManagement is the automatic maintenance of a pool.
type GKENodePoolManagement struct {
	// AutoRepair recreates unhealthy nodes.
	// +optional
	AutoRepair bool `json:"autoRepair,omitempty"`
	// AutoUpgrade upgrades the nodes with the control plane.
	// +optional
	AutoUpgrade bool `json:"autoUpgrade,omitempty"`
}

// GKENodeConfig is the configuration of a pool's nodes.
type GKENodeConfig struct {
	// BootDiskKmsKey is the Cloud KMS key of the boot disks.
	// +optional
	BootDiskKmsKey string `json:"bootDiskKmsKey,omitempty"`
	// DiskSizeGb is the boot disk size, in GB.
	// +optional
	DiskSizeGb int64 `json:"diskSizeGb,omitempty"`
	// DiskType is pd-standard, pd-balanced or pd-ssd.
	// +optional
	DiskType string `json:"diskType,omitempty"`
	// ImageType is the node image, e.g. COS_CONTAINERD.
	// +optional
	ImageType string `json:"imageType,omitempty"`
	// Labels are the Kubernetes labels of the nodes.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// LocalSsdCount is the number of local SSDs per node.
	// +optional
	LocalSsdCount int64 `json:"localSsdCount,omitempty"`
	// MachineType is the Compute Engine machine type, e.g. e2-medium.
	// +optional
	MachineType string `json:"machineType,omitempty"`
	// OauthScopes are the OAuth scopes of the nodes' service account.
	// +optional
	OauthScopes []string `json:"oauthScopes,omitempty"`
	// Preemptible makes the nodes preemptible VMs.
	// +optional
	Preemptible bool `json:"preemptible,omitempty"`
	// Tags are the network tags of the nodes.
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Taints are the Kubernetes taints of the nodes.
	// +optional
	Taints []GKENodeTaintConfig `json:"taints,omitempty"`
	// ServiceAccount is the nodes' service account (email); "" is the
	// project's default.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// GKENodeTaintConfig is one taint of a pool's nodes.
type GKENodeTaintConfig struct {
	// Effect is NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE.
	// +kubebuilder:validation:Enum=NO_SCHEDULE;PREFER_NO_SCHEDULE;NO_EXECUTE
	Effect string `json:"effect"`
	// Key is the taint's key.
	Key string `json:"key"`
	// Value is the taint's value.
	// +optional
	Value string `json:"value,omitempty"`
}

// Phases of a GKEClusterConfig (status.phase): the phases every
// hosted-cluster operator object shares (api/hosted/v1).
const (
	// PhaseCreating means the cluster is being created in GKE.
	PhaseCreating = hostedv1.PhaseCreating
	// PhaseActive means the cluster exists and no change is being applied.
	PhaseActive = hostedv1.PhaseActive
	// PhaseUpdating means a change is being applied to the cluster.
	PhaseUpdating = hostedv1.PhaseUpdating
	// PhaseImporting means an existing cluster is being registered.
	PhaseImporting = hostedv1.PhaseImporting
	// PhaseDeleting means the cluster is being deleted (or, if imported,
	// disconnected).
	PhaseDeleting = hostedv1.PhaseDeleting
)

// GKEClusterConfigStatus is what the GKE operator observed and created.
type GKEClusterConfigStatus struct {
	// OperatorStatus is the phase, failure message, pending updates and
	// conflicts, kept by the hosted-cluster engine as for every cloud.
	hostedv1.OperatorStatus `json:",inline"`

	// AppliedSpec holds, for each managed field, the last value the
	// operator and GKE agreed on (see AKSClusterConfigStatus.appliedSpec
	// and docs/hosted.md). Only the operator writes it.
	// +optional
	AppliedSpec *GKEClusterConfigSpec `json:"appliedSpec,omitempty"`

	// CreateRequested is true once the operator is about to send the
	// create call (written before it, and taken back when GKE refuses the
	// call): a cluster found under the name after that is this object's,
	// and only such a cluster is deleted with it.
	// +optional
	CreateRequested bool `json:"createRequested,omitempty"`
}

// GKEClusterConfig is one Google Kubernetes Engine cluster for the GKE
// operator. The management controller creates it from a Cluster's
// spec.gkeConfig, in namespace clustersync-global-data, and owns it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectID`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zone`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.kubernetesVersion`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GKEClusterConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the GKE cluster.
	Spec GKEClusterConfigSpec `json:"spec"`
	// Status is what the GKE operator observed.
	// +optional
	Status GKEClusterConfigStatus `json:"status,omitempty"`
}

// GKEClusterConfigList is a list of GKEClusterConfig objects.
//
// +kubebuilder:object:root=true
type GKEClusterConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the GKEClusterConfig objects.
	Items []GKEClusterConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GKEClusterConfig{}, &GKEClusterConfigList{})
}

// Location is the cluster's location in GKE's resource names: the region
// of a regional cluster, else the zone.
func (s GKEClusterConfigSpec) Location() string {
	if s.Region != "" {
		return s.Region
	}
	return s.Zone
}

// ConfigSpec returns the address of c's spec, for the hosted-cluster
// engine (internal/hosted/engine).
func (c *GKEClusterConfig) ConfigSpec() *GKEClusterConfigSpec { return &c.Spec }

// OperatorRecord returns the address of the status the hosted-cluster
// engine keeps: phase, failure message, pending updates, conflicts.
func (c *GKEClusterConfig) OperatorRecord() *hostedv1.OperatorStatus {
	return &c.Status.OperatorStatus
}

// AppliedSpecRef returns the address of status.appliedSpec.
func (c *GKEClusterConfig) AppliedSpecRef() **GKEClusterConfigSpec { return &c.Status.AppliedSpec }
