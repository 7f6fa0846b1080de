package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
)

// ClusterSpec is the desired state of a managed cluster: its name for
// people and the configuration of its driver. Exactly one driver config is
// set: eksConfig, aksConfig, gkeConfig (hosted clusters) or importedConfig (a
// registered cluster).
type ClusterSpec struct {
	// DisplayName is the cluster's name as shown to people.
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// EKSConfig is the desired state of an Amazon EKS cluster. Its non-nil
	// fields are the managed ones: clustersync makes the cloud match them
	// and leaves nil fields as the cloud has them (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters).
	// +optional
	EKSConfig *eksv1.EKSClusterConfigSpec `json:"eksConfig,omitempty"`

	// AKSConfig is the desired state of an Azure Kubernetes Service
	// cluster, with the same managed-field rule as eksConfig: non-nil
	// fields are managed, nil fields are left as Azure has them.
	// +optional
	AKSConfig *aksv1.AKSClusterConfigSpec `json:"aksConfig,omitempty"`

	// GKEConfig is the desired state of a Google Kubernetes Engine
	// cluster, with the same managed-field rule as eksConfig: non-nil
	// fields are managed, nil fields are left as GKE has them.
	// +optional
	GKEConfig *gkev1.GKEClusterConfigSpec `json:"gkeConfig,omitempty"`

	// ImportedConfig makes this a registered (imported) cluster: an
	// existing cluster connected by the clustersync agent, which dials back
	// to the management server (Rancher's cluster registration,
	// https://ranchermanager.docs.rancher.com/how-to-guides/new-user-guides/kubernetes-clusters-in-rancher-setup/register-existing-clusters). `clustersync cluster import` sets it.
	// +optional
	ImportedConfig *ImportedConfig `json:"importedConfig,omitempty"`

	// Members are the identities of the management cluster granted a role
	// in this cluster, whatever its driver (Rancher's cluster members): the
	// agent keeps matching RBAC bindings downstream, and the
	// /k8s/clusters/{cluster} proxy and the kubeconfigs of `clustersync
	// cluster kubeconfig` act as them. importedConfig.members, where older
	// registered clusters keep them, is read too (Cluster.Members).
	// +optional
	// +listType=atomic
	Members []ClusterMember `json:"members,omitempty"`

	// K3sConfig asks for a K3s (or RKE2) upgrade of a registered cluster
	// whose server version says it is one; for any other cluster it is
	// refused with condition Upgraded=False.
	// +optional
	K3sConfig *K3sConfig `json:"k3sConfig,omitempty"`
}

// Drivers (status.driver): the cloud service a Cluster is managed through.
const (
	// DriverEKS is Amazon Elastic Kubernetes Service (spec.eksConfig).
	DriverEKS = "EKS"
	// DriverAKS is Azure Kubernetes Service (spec.aksConfig).
	DriverAKS = "AKS"
	// DriverGKE is Google Kubernetes Engine (spec.gkeConfig).
	DriverGKE = "GKE"
	// DriverImported is a registered cluster connected by the agent
	// (spec.importedConfig).
	DriverImported = "imported"
)

// Phases of a Cluster (status.phase), a summary of its conditions for
// `kubectl get clusters`.
const (
	// PhasePending means the cluster was accepted and nothing was done yet.
	PhasePending = "Pending"
	// PhaseProvisioning means the cluster is being created or registered.
	PhaseProvisioning = "Provisioning"
	// PhaseActive means the cluster is provisioned and no change is in
	// flight.
	PhaseActive = "Active"
	// PhaseUpdating means a change is being applied in the cloud.
	PhaseUpdating = "Updating"
	// PhaseError means the last attempt failed; see the conditions'
	// messages.
	PhaseError = "Error"
	// PhaseDeleting means the cluster is being deleted, or disconnected if
	// it was imported.
	PhaseDeleting = "Deleting"
	// PhaseUnavailable means a registered cluster was Active and its agent
	// is no longer connected (Rancher shows "Unavailable").
	PhaseUnavailable = "Unavailable"
)

// Condition types of a Cluster (status.conditions), following Rancher's
// cluster conditions where they have one.
const (
	// ConditionPending is True once the driver accepted the cluster
	// (an imported cluster: Unknown while it is being registered, then
	// True).
	ConditionPending = "Pending"
	// ConditionProvisioned is True once the cluster exists in the cloud;
	// Unknown while it is being created.
	ConditionProvisioned = "Provisioned"
	// ConditionWaiting is False while the cluster cannot run workloads yet;
	// e.g. with no node group and no node, its message is "Cluster must
	// have at least one managed nodegroup or one self-managed node."
	ConditionWaiting = "Waiting"
	// ConditionUpdated is Unknown while a change is being applied in the
	// cloud and True once the cloud matches the managed fields.
	ConditionUpdated = "Updated"
	// ConditionReady is True when the cluster is provisioned, reachable and
	// not waiting on anything.
	ConditionReady = "Ready"
	// ConditionConflict is True when a managed field was changed both in
	// spec and in the cloud since clustersync last applied it; its message
	// names the fields. Nothing is written for them until the user edits
	// the spec.
	ConditionConflict = "Conflict"
	// ConditionConnected is True when clustersync can reach the cluster's
	// API server (directly or through a tunnel).
	ConditionConnected = "Connected"
	// ConditionCapabilitiesValid is False when a capability annotation has
	// a value of the wrong type; its message names the annotation.
	ConditionCapabilitiesValid = "CapabilitiesValid"
	// ConditionUpgraded reports a K3s/RKE2 upgrade asked in spec.k3sConfig:
	// Unknown while the Plans run, True when every node runs the version,
	// False when the cluster cannot be upgraded (not K3s or RKE2).
	ConditionUpgraded = "Upgraded"
	// ConditionAgentConnected reports the agent of a hosted cluster (EKS,
	// AKS, GKE), which the manager installs once the cluster is Active
	// (docs/design/hosted-agent.md): True while its tunnel is up and the
	// API server answers through it. A registered cluster reports its
	// agent in Connected instead.
	ConditionAgentConnected = "AgentConnected"
)

// AnnotationAgent on a hosted Cluster, set to "false", removes the agent
// the manager installed (a cleanup Job) and stops installing it; any
// other value, or none, means the cluster gets the agent. Registered
// clusters always have theirs.
const AnnotationAgent = "clustersync.io/agent"

// EKSStatus is what clustersync knows of the cloud side of an EKS cluster,
// copied from the EKSClusterConfig's status and refreshed from EKS.
type EKSStatus struct {
	// UpstreamSpec is the cluster as EKS reports it, refreshed every
	// --eks-refresh seconds and right after an update completes. Every
	// field the cloud has is set, managed or not. The identity fields
	// (displayName, region, amazonCredentialSecret, imported) are copied
	// from the config: the schema validates them here as in spec, so a
	// status write without them is refused.
	// +optional
	UpstreamSpec *eksv1.EKSClusterConfigSpec `json:"upstreamSpec,omitempty"`

	// AppliedSpec holds, for each managed field, the last value clustersync
	// and EKS agreed on: a copy of the EKS operator's status.appliedSpec,
	// which only the operator writes. Comparing config, upstream and
	// applied value tells a user change (push it) from an outside change
	// (adopt it) from both (condition Conflict), where Rancher overwrites
	// one of them (docs/hosted.md). Its identity fields are the config's,
	// as for UpstreamSpec.
	// +optional
	AppliedSpec *eksv1.EKSClusterConfigSpec `json:"appliedSpec,omitempty"`

	// VirtualNetwork is the ID of the cluster's VPC.
	// +optional
	VirtualNetwork string `json:"virtualNetwork,omitempty"`

	// Subnets are the IDs of the cluster's subnets.
	// +optional
	Subnets []string `json:"subnets,omitempty"`

	// SecurityGroups are the IDs of the cluster's security groups.
	// +optional
	SecurityGroups []string `json:"securityGroups,omitempty"`

	// PrivateRequiresTunnel is, for a cluster without a public endpoint,
	// whether clustersync must reach the private endpoint through a
	// tunnel: true when dialling it failed to resolve or timed out, false
	// when it succeeded, nil while undetermined.
	// +optional
	PrivateRequiresTunnel *bool `json:"privateRequiresTunnel,omitempty"`

	// ManagedLaunchTemplateID is the ID of the launch template the EKS
	// operator manages for the node groups.
	// +optional
	ManagedLaunchTemplateID string `json:"managedLaunchTemplateID,omitempty"`

	// ManagedLaunchTemplateVersions maps a node group's name to the version
	// of the managed launch template it uses.
	// +optional
	ManagedLaunchTemplateVersions map[string]string `json:"managedLaunchTemplateVersions,omitempty"`

	// GeneratedNodeRole is the ARN of the node IAM role the EKS operator
	// generated.
	// +optional
	GeneratedNodeRole string `json:"generatedNodeRole,omitempty"`
}

// AKSStatus is what clustersync knows of the cloud side of an AKS cluster,
// copied from the AKSClusterConfig's status and refreshed from Azure.
type AKSStatus struct {
	// UpstreamSpec is the cluster as AKS reports it, refreshed every
	// --aks-refresh seconds and right after an update completes. Every
	// field the cloud has is set, managed or not; an autoscaled pool's
	// count is the config's (the autoscaler owns it). The identity fields
	// are copied from the config.
	// +optional
	UpstreamSpec *aksv1.AKSClusterConfigSpec `json:"upstreamSpec,omitempty"`

	// AppliedSpec holds, for each managed field, the last value
	// clustersync and AKS agreed on: a copy of the AKS operator's
	// status.appliedSpec (see eksStatus.appliedSpec).
	// +optional
	AppliedSpec *aksv1.AKSClusterConfigSpec `json:"appliedSpec,omitempty"`

	// RBACEnabled is whether Kubernetes RBAC is enabled in the cluster.
	// +optional
	RBACEnabled *bool `json:"rbacEnabled,omitempty"`
}

// GKEStatus is what clustersync knows of the cloud side of a GKE cluster,
// copied from the GKEClusterConfig's status and refreshed from GKE.
type GKEStatus struct {
	// UpstreamSpec is the cluster as GKE reports it, refreshed every
	// --gke-refresh seconds and right after an update completes. Every
	// field the cloud has is set, managed or not; an autoscaled pool's
	// initialNodeCount is the config's (the autoscaler owns it). The
	// identity fields are copied from the config.
	// +optional
	UpstreamSpec *gkev1.GKEClusterConfigSpec `json:"upstreamSpec,omitempty"`

	// AppliedSpec holds, for each managed field, the last value
	// clustersync and GKE agreed on: a copy of the GKE operator's
	// status.appliedSpec (see eksStatus.appliedSpec).
	// +optional
	AppliedSpec *gkev1.GKEClusterConfigSpec `json:"appliedSpec,omitempty"`

	// PrivateRequiresTunnel is, for a cluster whose API server has a
	// private endpoint only (privateClusterConfig.enablePrivateEndpoint),
	// whether clustersync must reach it through a tunnel, as
	// eksStatus.privateRequiresTunnel.
	// +optional
	PrivateRequiresTunnel *bool `json:"privateRequiresTunnel,omitempty"`
}

// ClusterStatus is the observed state of a managed cluster.
type ClusterStatus struct {
	// Driver is the driver managing the cluster: "EKS", "AKS", "GKE" or
	// "imported".
	// +optional
	Driver string `json:"driver,omitempty"`

	// Phase summarises the conditions: Pending, Provisioning, Active,
	// Updating, Error or Deleting.
	// +kubebuilder:validation:Enum=Pending;Provisioning;Active;Updating;Error;Deleting;Unavailable
	// +optional
	Phase string `json:"phase,omitempty"`

	// Conditions are the cluster's conditions, one per type (see the
	// Condition constants).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Conflicts are the managed fields of a hosted cluster changed both in
	// its config and in the cloud since they were last applied, as its
	// cloud's operator recorded them (the operator object's
	// status.conflicts, copied by the management controller): what anyone
	// allowed to edit the Cluster answers (`clustersync cluster resolve`,
	// the dashboard, or the annotation clustersync.io/keep-config), without
	// reading the operator object.
	// +listType=map
	// +listMapKey=path
	// +optional
	Conflicts []hostedv1.FieldConflict `json:"conflicts,omitempty"`

	// EKSStatus is the cloud side of an EKS cluster.
	// +optional
	EKSStatus *EKSStatus `json:"eksStatus,omitempty"`

	// AKSStatus is the cloud side of an AKS cluster.
	// +optional
	AKSStatus *AKSStatus `json:"aksStatus,omitempty"`

	// GKEStatus is the cloud side of a GKE cluster.
	// +optional
	GKEStatus *GKEStatus `json:"gkeStatus,omitempty"`

	// APIEndpoint is the URL of the cluster's Kubernetes API server.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// CACert is the cluster's CA certificate, base64-encoded PEM.
	// +optional
	CACert string `json:"caCert,omitempty"`

	// ServiceAccountTokenSecret names the Secret holding the token of the
	// service account clustersync created in the cluster.
	// +optional
	ServiceAccountTokenSecret string `json:"serviceAccountTokenSecret,omitempty"`

	// Version is the Kubernetes version the cluster reports.
	// +optional
	Version string `json:"version,omitempty"`

	// Agent is what the agent of a registered cluster reported.
	// +optional
	Agent *AgentStatus `json:"agent,omitempty"`

	// Capabilities are what a registered cluster can do, as detected by the
	// agent and overridden by capability annotations on the Cluster.
	// +optional
	Capabilities *Capabilities `json:"capabilities,omitempty"`

	// K3s is the K3s (or RKE2) side of a registered cluster: each node's
	// launch arguments and environment (read-only) and the upgrade Plans.
	// +optional
	K3s *K3sStatus `json:"k3s,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec the
	// management controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Cluster is a Kubernetes cluster clustersync manages in a cloud service
// (Amazon EKS, Azure AKS, Google GKE) or that registered through the agent. It is
// cluster-scoped; for a hosted cluster the management controller creates
// the cloud's operator object from the cloud's config (an
// eks.clustersync.io EKSClusterConfig from spec.eksConfig, an
// aks.clustersync.io AKSClusterConfig from spec.aksConfig, a
// gke.clustersync.io GKEClusterConfig from spec.gkeConfig).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="[has(self.spec.eksConfig), has(self.spec.aksConfig), has(self.spec.gkeConfig), has(self.spec.importedConfig)].filter(x, x).size() == 1",message="exactly one of spec.eksConfig, spec.aksConfig, spec.gkeConfig and spec.importedConfig: a cluster has one driver"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.gkeConfig) || self.spec.gkeConfig.imported || (has(self.spec.gkeConfig.kubernetesVersion) && ((has(self.spec.gkeConfig.autopilotConfig) && self.spec.gkeConfig.autopilotConfig.enabled) || (has(self.spec.gkeConfig.nodePools) && size(self.spec.gkeConfig.nodePools) > 0)))",message="spec.gkeConfig: a cluster clustersync creates (imported: false) needs kubernetesVersion and at least one of nodePools (or autopilotConfig.enabled)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.aksConfig) || self.spec.aksConfig.imported || (has(self.spec.aksConfig.kubernetesVersion) && has(self.spec.aksConfig.dnsPrefix) && has(self.spec.aksConfig.nodePools) && size(self.spec.aksConfig.nodePools) > 0)",message="spec.aksConfig: a cluster clustersync creates (imported: false) needs kubernetesVersion, dnsPrefix and at least one of nodePools"
// +kubebuilder:printcolumn:name="Driver",type=string,JSONPath=`.status.driver`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the cluster.
	Spec ClusterSpec `json:"spec"`
	// Status is the observed state of the cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Cluster objects.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Cluster objects.
	Items []Cluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Cluster{}, &ClusterList{})
}

// AgentWanted reports whether c is to have the clustersync agent: a
// registered cluster always, a hosted cluster unless annotation
// AnnotationAgent is "false". A hosted cluster gets it once its cloud
// reports it Active (docs/design/hosted-agent.md).
func (c *Cluster) AgentWanted() bool {
	return c.Spec.ImportedConfig != nil || c.Annotations[AnnotationAgent] != "false"
}

// Members returns the members of the cluster: spec.members, then those of
// spec.importedConfig.members (where registered clusters kept them before
// spec.members), in that order; an identity listed twice keeps both
// entries, and the higher role wins where roles are compared.
func (c *Cluster) Members() []ClusterMember {
	out := append([]ClusterMember(nil), c.Spec.Members...)
	if c.Spec.ImportedConfig != nil {
		out = append(out, c.Spec.ImportedConfig.Members...)
	}
	return out
}
