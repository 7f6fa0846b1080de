package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

// AKSClusterConfigSpec is the desired state of one Azure Kubernetes Service
// managed cluster, with the fields and meanings of Rancher's
// AKSClusterConfigSpec (https://github.com/rancher/aks-operator). The
// management Cluster embeds it as spec.aksConfig (desired),
// status.aksStatus.upstreamSpec (what Azure reports) and
// status.aksStatus.appliedSpec (what clustersync last applied).
//
// resourceGroup, resourceLocation, clusterName, imported and
// azureCredentialSecret are plain values: they name the cluster and how to
// reach it, and are never taken from the cloud. Every other field is a
// pointer, and nil means unmanaged: clustersync leaves that property of the
// cloud cluster as it is and does not revert changes made elsewhere. A
// non-nil value, even an empty list or map, is managed: the cloud is made
// to match it. A cluster created by clustersync has the fields it was
// created with set; a registered (imported) one starts with every pointer
// nil.
//
// The same type holds the upstream and applied specs, which may lack what
// a config needs, so the rules that only hold for a config (what creation
// needs, autoscaling bounds) are checked on the Cluster and by the AKS
// operator, not here.
type AKSClusterConfigSpec struct {
	// ResourceGroup is the Azure resource group of the cluster; clustersync
	// creates it when it creates the cluster and it does not exist.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=90
	ResourceGroup string `json:"resourceGroup"`

	// ResourceLocation is the Azure region of the cluster, e.g. eastus.
	// +kubebuilder:validation:MinLength=1
	ResourceLocation string `json:"resourceLocation"`

	// ClusterName is the name of the managed cluster in Azure (unique in
	// the resource group). It cannot be changed.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ClusterName string `json:"clusterName"`

	// Imported is true for a cluster that existed before clustersync
	// registered it: it is never created and, on deletion, only
	// disconnected (no cloud call). Defaults to false.
	// +optional
	// +kubebuilder:default=false
	Imported bool `json:"imported"`

	// AzureCredentialSecret references the Secret holding the service
	// principal, as "namespace:name". The Secret has Rancher's keys
	// azurecredentialConfig-clientId, -clientSecret, -subscriptionId,
	// -tenantId and, optionally, -environment (AzurePublicCloud,
	// AzureChinaCloud, AzureUSGovernment).
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+:[a-z0-9.-]+$`
	AzureCredentialSecret string `json:"azureCredentialSecret"`

	// KubernetesVersion is the control plane's Kubernetes version, e.g.
	// "1.31" or "1.31.2". Upgrades go up one minor version at a time; a
	// downgrade is refused.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?$`
	// +optional
	KubernetesVersion *string `json:"kubernetesVersion,omitempty"`

	// DNSPrefix is the DNS name prefix of the API server's FQDN. It can
	// only be set at creation.
	// +optional
	DNSPrefix *string `json:"dnsPrefix,omitempty"`

	// Tags are the Azure tags of the managed cluster resource. A pointer to
	// a map so that an empty managed map (no tags wanted) differs from nil
	// (tags unmanaged).
	// +optional
	Tags *map[string]string `json:"tags,omitempty"`

	// NetworkPlugin is the network plugin: azure, kubenet or none. It can
	// only be set at creation.
	// +kubebuilder:validation:Enum=azure;kubenet;none
	// +optional
	NetworkPlugin *string `json:"networkPlugin,omitempty"`

	// NetworkPolicy is the network policy engine: azure, calico or cilium.
	// +optional
	NetworkPolicy *string `json:"networkPolicy,omitempty"`

	// PodCIDR is the CIDR of pod addresses (kubenet). Creation only.
	// +optional
	PodCIDR *string `json:"podCidr,omitempty"`

	// ServiceCIDR is the CIDR of service addresses. Creation only.
	// +optional
	ServiceCIDR *string `json:"serviceCidr,omitempty"`

	// DNSServiceIP is the cluster DNS service's address, inside
	// serviceCidr. Creation only.
	// +optional
	DNSServiceIP *string `json:"dnsServiceIp,omitempty"`

	// DockerBridgeCIDR is accepted for Rancher compatibility; AKS no
	// longer uses it (api-version 2025-02-01 has no such property) and it
	// is never sent.
	// +optional
	DockerBridgeCIDR *string `json:"dockerBridgeCidr,omitempty"`

	// OutboundType is how egress leaves the cluster: loadBalancer,
	// userDefinedRouting, managedNATGateway or userAssignedNATGateway.
	// Creation only.
	// +optional
	OutboundType *string `json:"outboundType,omitempty"`

	// LoadBalancerSKU is the SKU of the cluster's load balancer: standard
	// or basic. Creation only.
	// +kubebuilder:validation:Enum=standard;basic
	// +optional
	LoadBalancerSKU *string `json:"loadBalancerSku,omitempty"`

	// VirtualNetwork is the name of an existing virtual network the pools'
	// subnet is in (with VirtualNetworkResourceGroup and Subnet). Creation
	// only.
	// +optional
	VirtualNetwork *string `json:"virtualNetwork,omitempty"`

	// VirtualNetworkResourceGroup is the resource group of VirtualNetwork.
	// +optional
	VirtualNetworkResourceGroup *string `json:"virtualNetworkResourceGroup,omitempty"`

	// Subnet is the name of the subnet of VirtualNetwork the pools use.
	// +optional
	Subnet *string `json:"subnet,omitempty"`

	// NodeResourceGroup is the resource group AKS creates for the nodes.
	// Creation only.
	// +optional
	NodeResourceGroup *string `json:"nodeResourceGroup,omitempty"`

	// PrivateCluster makes the API server reachable only from the virtual
	// network. Creation only.
	// +optional
	PrivateCluster *bool `json:"privateCluster,omitempty"`

	// PrivateDNSZone is the private DNS zone of a private cluster: system,
	// none, or a zone's resource ID. Creation only.
	// +optional
	PrivateDNSZone *string `json:"privateDnsZone,omitempty"`

	// AuthorizedIPRanges are the CIDR blocks allowed to reach the API
	// server; an empty list allows every address.
	// +optional
	AuthorizedIPRanges *[]string `json:"authorizedIpRanges,omitempty"`

	// HTTPApplicationRouting enables the HTTP application routing add-on.
	// +optional
	HTTPApplicationRouting *bool `json:"httpApplicationRouting,omitempty"`

	// Monitoring enables the monitoring add-on (omsagent), sending to the
	// Log Analytics workspace LogAnalyticsWorkspaceGroup /
	// LogAnalyticsWorkspaceName.
	// +optional
	Monitoring *bool `json:"monitoring,omitempty"`

	// LogAnalyticsWorkspaceGroup is the resource group of the monitoring
	// workspace.
	// +optional
	LogAnalyticsWorkspaceGroup *string `json:"logAnalyticsWorkspaceGroup,omitempty"`

	// LogAnalyticsWorkspaceName is the name of the monitoring workspace.
	// +optional
	LogAnalyticsWorkspaceName *string `json:"logAnalyticsWorkspaceName,omitempty"`

	// ManagedIdentity gives the cluster a managed identity (system-assigned
	// unless UserAssignedIdentity names one) instead of the service
	// principal. Creation only.
	// +optional
	ManagedIdentity *bool `json:"managedIdentity,omitempty"`

	// UserAssignedIdentity is the resource ID of the user-assigned identity
	// of the cluster. Creation only.
	// +optional
	UserAssignedIdentity *string `json:"userAssignedIdentity,omitempty"`

	// LinuxAdminUsername is the admin user of the Linux nodes. Creation
	// only.
	// +optional
	LinuxAdminUsername *string `json:"linuxAdminUsername,omitempty"`

	// SSHPublicKey is the public key of LinuxAdminUsername. Creation only.
	// +optional
	SSHPublicKey *string `json:"sshPublicKey,omitempty"`

	// NodePools are the cluster's agent pools, keyed by name: clustersync
	// compares and updates them one by one, by name. A pool created
	// outside clustersync is never deleted for being absent from this
	// list unless it was once in it (rancher/rancher#32734).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	NodePools *[]AKSNodePool `json:"nodePools,omitempty"`
}

// AKSNodePool is one agent pool of an AKS cluster. Every field but the name
// is a pointer, nil meaning unmanaged as for AKSClusterConfigSpec. Counts
// are numbers of nodes.
type AKSNodePool struct {
	// Name is the pool's name in AKS (lowercase letters and digits, up to
	// 12 characters); it keys the nodePools list.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]{0,11}$`
	Name string `json:"name"`

	// Count is the number of nodes. It is neither pushed nor adopted while
	// enableAutoScaling is true: the autoscaler owns it
	// (rancher/rancher#33446).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int32 `json:"count,omitempty"`

	// MaxPods is the maximum number of pods per node. Creation only.
	// +optional
	MaxPods *int32 `json:"maxPods,omitempty"`

	// VMSize is the Azure VM size of the nodes, e.g. Standard_D2s_v3. It
	// cannot be changed on an existing pool.
	// +optional
	VMSize *string `json:"vmSize,omitempty"`

	// OsDiskSizeGB is the OS disk size of each node, in GiB. Creation
	// only.
	// +optional
	OsDiskSizeGB *int32 `json:"osDiskSizeGB,omitempty"`

	// OsDiskType is Managed or Ephemeral. Creation only.
	// +kubebuilder:validation:Enum=Managed;Ephemeral
	// +optional
	OsDiskType *string `json:"osDiskType,omitempty"`

	// Mode is System (runs system pods; a cluster keeps at least one) or
	// User.
	// +kubebuilder:validation:Enum=System;User
	// +optional
	Mode *string `json:"mode,omitempty"`

	// OsType is Linux or Windows. Creation only.
	// +kubebuilder:validation:Enum=Linux;Windows
	// +optional
	OsType *string `json:"osType,omitempty"`

	// OrchestratorVersion is the Kubernetes version of the pool's nodes,
	// at most the control plane's.
	// +optional
	OrchestratorVersion *string `json:"orchestratorVersion,omitempty"`

	// AvailabilityZones are the zones of the nodes. Creation only.
	// +optional
	AvailabilityZones *[]string `json:"availabilityZones,omitempty"`

	// EnableAutoScaling lets the cluster autoscaler set count between
	// minCount and maxCount.
	// +optional
	EnableAutoScaling *bool `json:"enableAutoScaling,omitempty"`

	// MinCount is the autoscaler's lower bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinCount *int32 `json:"minCount,omitempty"`

	// MaxCount is the autoscaler's upper bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxCount *int32 `json:"maxCount,omitempty"`

	// MaxSurge is how many extra nodes an upgrade may add: a number or a
	// percentage, e.g. "1" or "33%".
	// +optional
	MaxSurge *string `json:"maxSurge,omitempty"`

	// NodeLabels are the Kubernetes labels of the pool's nodes.
	// +optional
	NodeLabels *map[string]string `json:"nodeLabels,omitempty"`

	// NodeTaints are the taints of the pool's nodes, as key=value:Effect.
	// +optional
	NodeTaints *[]string `json:"nodeTaints,omitempty"`

	// VnetSubnetID is the resource ID of the subnet of the pool's nodes.
	// Creation only.
	// +optional
	VnetSubnetID *string `json:"vnetSubnetID,omitempty"`
}

// Phases of an AKSClusterConfig (status.phase): the phases every
// hosted-cluster operator object shares (api/hosted/v1).
const (
	// PhaseCreating means the cluster is being created in AKS.
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

// AKSClusterConfigStatus is what the AKS operator observed and created.
type AKSClusterConfigStatus struct {
	// OperatorStatus is the phase, failure message, pending updates and
	// conflicts, kept by the hosted-cluster engine as for every cloud.
	hostedv1.OperatorStatus `json:",inline"`

	// AppliedSpec holds, for each managed field, the last value the
	// operator and AKS agreed on. It tells a user change (spec ≠ applied:
	// push it) from an outside change (upstream ≠ applied: the management
	// controller adopts it) from both (a conflict: nothing is written).
	// Only the operator writes it. Pools in it are the ones clustersync
	// created or agreed on: a pool AKS reports that is neither in it nor in
	// the spec was created outside clustersync and is never deleted for
	// being absent from the spec. Identity fields are the spec's. See
	// docs/hosted.md.
	// +optional
	AppliedSpec *AKSClusterConfigSpec `json:"appliedSpec,omitempty"`

	// CreateRequested is true once the operator is about to send the
	// create call (written before it): a cluster found under the name
	// after that is this object's, not someone else's.
	// +optional
	CreateRequested bool `json:"createRequested,omitempty"`

	// CreatedResourceGroup is true when clustersync created the resource
	// group; only then is it deleted with the cluster.
	// +optional
	CreatedResourceGroup bool `json:"createdResourceGroup,omitempty"`

	// RBACEnabled is whether Kubernetes RBAC is enabled in the cluster.
	// +optional
	RBACEnabled *bool `json:"rbacEnabled,omitempty"`
}

// AKSClusterConfig is one Azure Kubernetes Service cluster for the AKS
// operator. The management controller creates it from a Cluster's
// spec.aksConfig, in namespace clustersync-global-data, and owns it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Location",type=string,JSONPath=`.spec.resourceLocation`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.kubernetesVersion`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AKSClusterConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the AKS cluster.
	Spec AKSClusterConfigSpec `json:"spec"`
	// Status is what the AKS operator observed.
	// +optional
	Status AKSClusterConfigStatus `json:"status,omitempty"`
}

// AKSClusterConfigList is a list of AKSClusterConfig objects.
//
// +kubebuilder:object:root=true
type AKSClusterConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AKSClusterConfig objects.
	Items []AKSClusterConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AKSClusterConfig{}, &AKSClusterConfigList{})
}

// ConfigSpec returns the address of c's spec, for the hosted-cluster
// engine (internal/hosted/engine).
func (c *AKSClusterConfig) ConfigSpec() *AKSClusterConfigSpec { return &c.Spec }

// OperatorRecord returns the address of the status the hosted-cluster
// engine keeps: phase, failure message, pending updates, conflicts.
func (c *AKSClusterConfig) OperatorRecord() *hostedv1.OperatorStatus {
	return &c.Status.OperatorStatus
}

// AppliedSpecRef returns the address of status.appliedSpec.
func (c *AKSClusterConfig) AppliedSpecRef() **AKSClusterConfigSpec { return &c.Status.AppliedSpec }
