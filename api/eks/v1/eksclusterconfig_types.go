package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

// EKSClusterConfigSpec is the desired state of one Amazon EKS cluster, with
// the fields and meanings of Rancher's EKSClusterConfigSpec
// (Rancher's EKS driver, https://github.com/rancher/eks-operator). The management Cluster embeds it as
// spec.eksConfig (desired), status.eksStatus.upstreamSpec (what the cloud
// reports) and status.appliedSpec (what clustersync last applied).
//
// displayName, region, imported and amazonCredentialSecret are plain values:
// they name the cluster and how to reach it, and are never taken from the
// cloud. Every other field is a pointer, and nil means unmanaged: clustersync
// leaves that property of the cloud cluster as it is and does not revert
// changes made elsewhere (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters). A non-nil value, even an
// empty list or map, is managed: the cloud is made to match it. A cluster
// created by clustersync has every field set; a registered (imported) one
// starts with every pointer nil.
type EKSClusterConfigSpec struct {
	// DisplayName is the name of the cluster in EKS (unique per region and
	// account).
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// AmazonCredentialSecret references the Secret holding the AWS
	// credentials, as "namespace:name". The Secret has the keys
	// amazonec2credentialConfig-accessKey and
	// amazonec2credentialConfig-secretKey.
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+:[a-z0-9.-]+$`
	AmazonCredentialSecret string `json:"amazonCredentialSecret"`

	// Region is the AWS region of the cluster, e.g. us-west-2.
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`

	// Imported is true for a cluster that existed before clustersync
	// registered it: it is never created and, on deletion, only
	// disconnected (no cloud call). Defaults to false (created by
	// clustersync).
	// +optional
	// +kubebuilder:default=false
	Imported bool `json:"imported"`

	// KubernetesVersion is the control plane's Kubernetes version as
	// "major.minor", e.g. "1.32". Upgrades go up one minor version at a
	// time; a downgrade is refused.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+$`
	// +optional
	KubernetesVersion *string `json:"kubernetesVersion,omitempty"`

	// Tags are the AWS tags of the EKS cluster resource. A pointer to a map
	// so that an empty managed map (no tags wanted) differs from nil
	// (tags unmanaged).
	// +optional
	Tags *map[string]string `json:"tags,omitempty"`

	// SecretsEncryption enables envelope encryption of Kubernetes Secrets
	// with the KMS key KMSKey. It can only be set at creation.
	// +optional
	SecretsEncryption *bool `json:"secretsEncryption,omitempty"`

	// KMSKey is the ARN of the KMS key used for secrets encryption.
	// +optional
	KMSKey *string `json:"kmsKey,omitempty"`

	// PublicAccess enables the public API server endpoint.
	// +optional
	PublicAccess *bool `json:"publicAccess,omitempty"`

	// PrivateAccess enables the private (VPC-internal) API server endpoint.
	// With PublicAccess false, clustersync checks whether it can reach the
	// endpoint directly or needs a tunnel (status.eksStatus.privateRequiresTunnel).
	// +optional
	PrivateAccess *bool `json:"privateAccess,omitempty"`

	// PublicAccessSources are the CIDR blocks allowed to reach the public
	// API server endpoint.
	// +optional
	PublicAccessSources *[]string `json:"publicAccessSources,omitempty"`

	// LoggingTypes are the control plane log types sent to CloudWatch; an
	// empty list disables them all.
	// +kubebuilder:validation:items:Enum=api;audit;authenticator;controllerManager;scheduler
	// +optional
	LoggingTypes *[]string `json:"loggingTypes,omitempty"`

	// Subnets are the IDs of the VPC subnets of the control plane. When
	// none are given at creation, the EKS operator generates a VPC with
	// subnets (status networkFieldsSource "generated"). Never taken from
	// the cloud into the config.
	// +optional
	Subnets *[]string `json:"subnets,omitempty"`

	// SecurityGroups are the IDs of the security groups of the control
	// plane's network interfaces. Never taken from the cloud into the
	// config.
	// +optional
	SecurityGroups *[]string `json:"securityGroups,omitempty"`

	// ServiceRole is the name or ARN of the IAM role EKS assumes for the
	// control plane; generated when empty at creation. Never taken from the
	// cloud into the config.
	// +optional
	ServiceRole *string `json:"serviceRole,omitempty"`

	// EBSCSIDriver installs the Amazon EBS CSI driver add-on.
	// +optional
	EBSCSIDriver *bool `json:"ebsCSIDriver,omitempty"`

	// IPFamily is the IP family of pod and service addresses: ipv4 or
	// ipv6. It can only be set at creation.
	// +kubebuilder:validation:Enum=ipv4;ipv6
	// +optional
	IPFamily *string `json:"ipFamily,omitempty"`

	// NodeGroups are the EKS managed node groups, keyed by nodegroupName:
	// clustersync compares and updates them one by one, by name. An empty
	// managed list means no managed node groups.
	// +listType=map
	// +listMapKey=nodegroupName
	// +optional
	NodeGroups *[]NodeGroup `json:"nodeGroups,omitempty"`
}

// NodeGroup is one EKS managed node group. Every field but the name is a
// pointer, nil meaning unmanaged as for EKSClusterConfigSpec. Sizes are
// numbers of nodes.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minSize) || !has(self.maxSize) || self.minSize <= self.maxSize",message="minSize must not exceed maxSize",fieldPath=".minSize"
// +kubebuilder:validation:XValidation:rule="!has(self.minSize) || !has(self.desiredSize) || self.minSize <= self.desiredSize",message="desiredSize must not be below minSize",fieldPath=".desiredSize"
// +kubebuilder:validation:XValidation:rule="!has(self.desiredSize) || !has(self.maxSize) || self.desiredSize <= self.maxSize",message="desiredSize must not exceed maxSize",fieldPath=".desiredSize"
type NodeGroup struct {
	// NodegroupName is the node group's name in EKS, unique within the
	// cluster; it keys the nodeGroups list.
	// +kubebuilder:validation:MinLength=1
	NodegroupName string `json:"nodegroupName"`

	// DesiredSize is the number of nodes the group should run, between
	// MinSize and MaxSize.
	// +kubebuilder:validation:Minimum=0
	// +optional
	DesiredSize *int64 `json:"desiredSize,omitempty"`

	// MinSize is the smallest number of nodes the group scales to.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinSize *int64 `json:"minSize,omitempty"`

	// MaxSize is the largest number of nodes the group scales to.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxSize *int64 `json:"maxSize,omitempty"`

	// DiskSize is the size of each node's root EBS volume, in GiB.
	// +kubebuilder:validation:Minimum=1
	// +optional
	DiskSize *int64 `json:"diskSize,omitempty"`

	// InstanceType is the EC2 instance type of the nodes, e.g. t3.medium.
	// +optional
	InstanceType *string `json:"instanceType,omitempty"`

	// Labels are the Kubernetes labels put on the group's nodes.
	// +optional
	Labels *map[string]string `json:"labels,omitempty"`

	// Tags are the AWS tags of the node group resource.
	// +optional
	Tags *map[string]string `json:"tags,omitempty"`

	// ResourceTags are the AWS tags put on the resources the node group
	// launches (instances, volumes), through its launch template.
	// +optional
	ResourceTags *map[string]string `json:"resourceTags,omitempty"`

	// Ec2SshKey is the name of the EC2 key pair allowed to SSH into the
	// nodes.
	// +optional
	Ec2SshKey *string `json:"ec2SshKey,omitempty"`

	// Subnets are the IDs of the subnets the nodes run in; the cluster's
	// subnets when unset at creation.
	// +optional
	Subnets *[]string `json:"subnets,omitempty"`

	// Version is the Kubernetes version of the nodes, "major.minor"; at
	// most the control plane's version.
	// +optional
	Version *string `json:"version,omitempty"`

	// LaunchTemplate is a launch template of the user's to launch the nodes
	// from. When nil, the EKS operator uses its managed launch template
	// (status managedLaunchTemplateID) built from the fields below.
	// +optional
	LaunchTemplate *LaunchTemplate `json:"launchTemplate,omitempty"`

	// RequestSpotInstances runs the nodes as EC2 spot instances.
	// +optional
	RequestSpotInstances *bool `json:"requestSpotInstances,omitempty"`

	// SpotInstanceTypes are the instance types to request spot capacity
	// for, when RequestSpotInstances is true.
	// +optional
	SpotInstanceTypes *[]string `json:"spotInstanceTypes,omitempty"`

	// UserData is the EC2 user data of the nodes, in MIME multi-part
	// format, run at boot before the node joins.
	// +optional
	UserData *string `json:"userData,omitempty"`

	// NodeRole is the ARN of the IAM role of the nodes; generated when
	// empty at creation (status generatedNodeRole).
	// +optional
	NodeRole *string `json:"nodeRole,omitempty"`

	// ImageID is the ID of the AMI the nodes boot from; the EKS-optimized
	// AMI for Version when unset.
	// +optional
	ImageID *string `json:"imageId,omitempty"`

	// GPU selects the EKS-optimized accelerated (GPU) AMI.
	// +optional
	GPU *bool `json:"gpu,omitempty"`

	// Arm selects the EKS-optimized arm64 AMI.
	// +optional
	Arm *bool `json:"arm,omitempty"`
}

// LaunchTemplate references an EC2 launch template by ID or name, and one
// of its versions.
type LaunchTemplate struct {
	// Name is the launch template's name.
	// +optional
	Name *string `json:"name,omitempty"`

	// ID is the launch template's ID (lt-...).
	// +optional
	ID *string `json:"id,omitempty"`

	// Version is the launch template version number to use.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Version *int64 `json:"version,omitempty"`
}

// Phases of an EKSClusterConfig (status.phase): the phases every
// hosted-cluster operator object shares (api/hosted/v1).
const (
	// PhaseCreating means the cluster is being created in EKS.
	PhaseCreating = hostedv1.PhaseCreating
	// PhaseActive means the cluster exists and matches the spec.
	PhaseActive = hostedv1.PhaseActive
	// PhaseUpdating means a change is being applied to the cluster.
	PhaseUpdating = hostedv1.PhaseUpdating
	// PhaseImporting means an existing cluster is being registered.
	PhaseImporting = hostedv1.PhaseImporting
	// PhaseDeleting means the cluster is being deleted (or, if imported,
	// disconnected).
	PhaseDeleting = hostedv1.PhaseDeleting
)

// Values of status.networkFieldsSource.
const (
	// NetworkFieldsGenerated means the EKS operator created the VPC, subnets and
	// security groups (a CloudFormation stack), and deletes them with the
	// cluster.
	NetworkFieldsGenerated = "generated"
	// NetworkFieldsProvided means the subnets and security groups came from the
	// spec.
	NetworkFieldsProvided = "provided"
)

// EKSClusterConfigStatus is what the EKS operator observed and created.
type EKSClusterConfigStatus struct {
	// OperatorStatus is the phase, failure message, pending updates and
	// conflicts, kept by the hosted-cluster engine as for every cloud.
	hostedv1.OperatorStatus `json:",inline"`

	// VirtualNetwork is the ID of the cluster's VPC.
	// +optional
	VirtualNetwork string `json:"virtualNetwork,omitempty"`

	// Subnets are the IDs of the cluster's subnets, given or generated.
	// +optional
	Subnets []string `json:"subnets,omitempty"`

	// SecurityGroups are the IDs of the cluster's security groups, given
	// or generated.
	// +optional
	SecurityGroups []string `json:"securityGroups,omitempty"`

	// NetworkFieldsSource says whether the network above was "generated"
	// by the operator or "provided" in the spec.
	// +kubebuilder:validation:Enum=generated;provided
	// +optional
	NetworkFieldsSource string `json:"networkFieldsSource,omitempty"`

	// AppliedSpec holds, for each managed field, the last value the
	// operator and EKS agreed on: a value EKS reported equal to the spec,
	// or one the operator pushed and EKS accepted (an update EKS reports
	// Failed, or a call it refused, leaves it as it was). It tells a user
	// change (spec ≠ applied: push it) from an outside change (upstream ≠
	// applied: the management controller adopts it) from both (a conflict:
	// nothing is written). Only the operator writes it. Node groups in it
	// are the ones clustersync created or agreed on: a node group EKS
	// reports that is neither in it nor in the spec was created outside
	// clustersync and is never deleted for being absent from the spec.
	// Identity fields are the spec's. See docs/hosted.md.
	// +optional
	AppliedSpec *EKSClusterConfigSpec `json:"appliedSpec,omitempty"`

	// TemplateVersionsToDelete are versions of the managed launch template
	// no node group uses any more, to be deleted.
	// +optional
	TemplateVersionsToDelete []string `json:"templateVersionsToDelete,omitempty"`

	// ManagedLaunchTemplateID is the ID of the launch template the operator
	// created for node groups without a launchTemplate of their own.
	// +optional
	ManagedLaunchTemplateID string `json:"managedLaunchTemplateID,omitempty"`

	// ManagedLaunchTemplateVersions maps a node group's name to the version
	// of the managed launch template it uses.
	// +optional
	ManagedLaunchTemplateVersions map[string]string `json:"managedLaunchTemplateVersions,omitempty"`

	// GeneratedNodeRole is the ARN of the node IAM role the operator
	// created for node groups without a nodeRole.
	// +optional
	GeneratedNodeRole string `json:"generatedNodeRole,omitempty"`

	// CompletedUpdateIDs are the IDs of EKS updates (ListUpdates) the
	// operator has seen finish, so that it does not wait on them again.
	// +optional
	CompletedUpdateIDs []string `json:"completedUpdateIDs,omitempty"`
}

// EKSClusterConfig is one Amazon EKS cluster for the EKS operator. The
// management controller creates it from a Cluster's spec.eksConfig, in
// namespace clustersync-global-data, and owns it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.kubernetesVersion`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EKSClusterConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the EKS cluster.
	Spec EKSClusterConfigSpec `json:"spec"`
	// Status is what the EKS operator observed.
	// +optional
	Status EKSClusterConfigStatus `json:"status,omitempty"`
}

// EKSClusterConfigList is a list of EKSClusterConfig objects.
//
// +kubebuilder:object:root=true
type EKSClusterConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the EKSClusterConfig objects.
	Items []EKSClusterConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EKSClusterConfig{}, &EKSClusterConfigList{})
}
