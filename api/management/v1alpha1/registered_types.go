package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImportedConfig is the configuration of a registered cluster.
type ImportedConfig struct {
	// Members are the identities of the management cluster granted a role
	// in this cluster, as spec.members, which is where they go now (`cluster
	// import --member` writes there); both lists are read.
	// +optional
	// +listType=atomic
	Members []ClusterMember `json:"members,omitempty"`

	// TokenTTLSeconds is how long a registration token is valid, in
	// seconds; nil means 86400 (24 hours). Tokens rotate before they
	// expire.
	// +kubebuilder:validation:Minimum=600
	// +optional
	TokenTTLSeconds *int64 `json:"tokenTTLSeconds,omitempty"`

	// TokenGraceSeconds is how long the previous token stays valid after a
	// rotation, in seconds, so that a running agent is not cut off; nil
	// means 3600.
	// +kubebuilder:validation:Minimum=60
	// +optional
	TokenGraceSeconds *int64 `json:"tokenGraceSeconds,omitempty"`
}

// Cluster roles of members (Rancher's cluster role templates).
const (
	// RoleClusterOwner may do anything in the cluster.
	RoleClusterOwner = "cluster-owner"
	// RoleClusterMember may read everything and manage workloads.
	RoleClusterMember = "cluster-member"
	// RoleReadOnly may only read.
	RoleReadOnly = "read-only"
)

// ClusterMember grants a cluster role to an identity of the management
// cluster.
type ClusterMember struct {
	// Kind is the kind of identity: User, Group or ServiceAccount.
	// +kubebuilder:validation:Enum=User;Group;ServiceAccount
	Kind string `json:"kind"`
	// Name is the user or group name as the management cluster
	// authenticates it; for a ServiceAccount "namespace:name".
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Role is cluster-owner, cluster-member or read-only.
	// +kubebuilder:validation:Enum=cluster-owner;cluster-member;read-only
	Role string `json:"role"`
}

// K3sConfig is a K3s/RKE2 upgrade of a registered cluster, carried out by
// the system-upgrade-controller's two Plans (upgrade.cattle.io/v1)
// k3s-master-plan and k3s-worker-plan, as Rancher does
// (https://github.com/rancher/rancher/blob/main/pkg/controllers/management/k3sbasedupgrade/template.go).
type K3sConfig struct {
	// KubernetesVersion is the version to run, e.g. "v1.31.4+k3s1".
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+\+(k3s|rke2)[0-9]+$`
	KubernetesVersion string `json:"kubernetesVersion"`
	// ServerConcurrency is how many server (control-plane) nodes upgrade at
	// once.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	ServerConcurrency int32 `json:"serverConcurrency,omitempty"`
	// WorkerConcurrency is how many agent (worker) nodes upgrade at once.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	WorkerConcurrency int32 `json:"workerConcurrency,omitempty"`
	// Drain, when set, drains each node before its upgrade (the Plan's
	// drain options); otherwise nodes are only cordoned.
	// +optional
	Drain *DrainOptions `json:"drain,omitempty"`
}

// DrainOptions are the drain settings of a system-upgrade-controller Plan.
type DrainOptions struct {
	// Force drains pods not managed by a controller.
	// +optional
	Force bool `json:"force,omitempty"`
	// DeleteEmptyDirData drains pods with emptyDir volumes.
	// +optional
	DeleteEmptyDirData bool `json:"deleteEmptyDirData,omitempty"`
	// IgnoreDaemonSets skips DaemonSet pods; nil means true.
	// +optional
	IgnoreDaemonSets *bool `json:"ignoreDaemonSets,omitempty"`
	// TimeoutSeconds bounds the drain, in seconds; nil means no bound.
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// GracePeriodSeconds is the pods' termination grace period, in
	// seconds; nil means each pod's own.
	// +optional
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// Distributions a registered cluster can be (AgentStatus.Distribution),
// read from the server's gitVersion ("+k3s", "+rke2").
const (
	DistributionK3s  = "k3s"
	DistributionRKE2 = "rke2"
)

// AgentStatus is what the agent of a registered cluster reported when it
// connected, and how recently it answered.
type AgentStatus struct {
	// KubeSystemUID is the UID of the cluster's kube-system namespace: the
	// cluster's identity. A cluster Active under one Cluster cannot be
	// registered under another.
	// +optional
	KubeSystemUID string `json:"kubeSystemUID,omitempty"`
	// APIEndpoint is the downstream API server address as the agent sees
	// it (reached through the tunnel).
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`
	// Distribution is "k3s", "rke2" or empty.
	// +kubebuilder:validation:Enum="";k3s;rke2
	// +optional
	Distribution string `json:"distribution,omitempty"`
	// AgentVersion is the clustersync version of the agent.
	// +optional
	AgentVersion string `json:"agentVersion,omitempty"`
	// ConnectedSince is when the current tunnel was opened.
	// +optional
	ConnectedSince *metav1.Time `json:"connectedSince,omitempty"`
	// LastPing is when the cluster last answered a ping through the tunnel
	// (every 15 seconds).
	// +optional
	LastPing *metav1.Time `json:"lastPing,omitempty"`
}

// Capability annotations on a Cluster override what the agent detected:
// "capabilities.clustersync.io/<name>", or Rancher's
// "capabilities.cattle.io/<name>" (https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/,
// "Annotating Imported Clusters"). Values are parsed
// by the capability's type: bool, string, or JSON for lists and objects.
const (
	CapabilityAnnotationPrefix        = "capabilities.clustersync.io/"
	RancherCapabilityAnnotationPrefix = "capabilities.cattle.io/"
)

// Names of the capabilities (the JSON names of Capabilities' fields).
const (
	CapabilityIngress         = "ingressCapabilities"
	CapabilityLoadBalancer    = "loadBalancerCapabilities"
	CapabilityNodePoolScaling = "nodePoolScalingSupported"
	CapabilityNodePortRange   = "nodePortRange"
	CapabilityPSPEnabled      = "pspEnabled"
	CapabilityTaintSupport    = "taintSupport"
)

// Capabilities are what a registered cluster supports, with Rancher's
// capability types (https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/).
type Capabilities struct {
	// IngressCapabilities lists the ingress controllers.
	// +optional
	// +listType=atomic
	IngressCapabilities []IngressCapability `json:"ingressCapabilities,omitempty"`
	// LoadBalancerCapabilities says whether Services of type LoadBalancer
	// get an address.
	// +optional
	LoadBalancerCapabilities *LoadBalancerCapabilities `json:"loadBalancerCapabilities,omitempty"`
	// NodePoolScalingSupported says whether node pools can be scaled.
	// +optional
	NodePoolScalingSupported *bool `json:"nodePoolScalingSupported,omitempty"`
	// NodePortRange is the Service node port range, e.g. "30000-32767".
	// +optional
	NodePortRange string `json:"nodePortRange,omitempty"`
	// PSPEnabled says whether PodSecurityPolicies are enforced.
	// +optional
	PSPEnabled *bool `json:"pspEnabled,omitempty"`
	// TaintSupport says whether nodes can be tainted.
	// +optional
	TaintSupport *bool `json:"taintSupport,omitempty"`
}

// IngressCapability is one ingress controller.
type IngressCapability struct {
	// IngressProvider names it, e.g. "nginx".
	IngressProvider string `json:"ingressProvider"`
	// CustomDefaultBackend says whether it takes a custom default backend.
	// +optional
	CustomDefaultBackend *bool `json:"customDefaultBackend,omitempty"`
}

// LoadBalancerCapabilities describe the Service load balancer.
type LoadBalancerCapabilities struct {
	// Enabled says whether LoadBalancer Services get an address.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Provider names the load balancer, e.g. "ELB".
	// +optional
	Provider string `json:"provider,omitempty"`
	// ProtocolsSupported are the protocols, e.g. ["TCP","UDP"].
	// +optional
	// +listType=atomic
	ProtocolsSupported []string `json:"protocolsSupported,omitempty"`
	// HealthCheckSupported says whether health checks can be set.
	// +optional
	HealthCheckSupported bool `json:"healthCheckSupported,omitempty"`
}

// K3sStatus is the K3s/RKE2 side of a registered cluster.
type K3sStatus struct {
	// Nodes are the nodes with their launch arguments and environment, read
	// from the node annotations k3s.io/node-args and k3s.io/node-env.
	// +optional
	// +listType=map
	// +listMapKey=name
	Nodes []K3sNode `json:"nodes,omitempty"`
	// Plans are the system-upgrade-controller Plans clustersync created.
	// +optional
	// +listType=atomic
	Plans []string `json:"plans,omitempty"`
}

// K3sNode is one node's K3s configuration, read-only.
type K3sNode struct {
	// Name is the node's name.
	Name string `json:"name"`
	// ControlPlane says whether it is a server node.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// Version is the kubelet version the node reports.
	// +optional
	Version string `json:"version,omitempty"`
	// Args are the k3s command-line arguments (k3s.io/node-args, secrets
	// redacted by K3s).
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`
	// Env is the k3s environment (k3s.io/node-env).
	// +optional
	Env map[string]string `json:"env,omitempty"`
}

// ProjectAnnotation records on a downstream namespace the project it
// belongs to, as "<cluster>:<project>" (Rancher's field.cattle.io/projectId).
const ProjectAnnotation = "clustersync.io/project"

// ProjectSpec is a project of a registered cluster.
type ProjectSpec struct {
	// ClusterName is the Cluster the project belongs to.
	// +kubebuilder:validation:MinLength=1
	ClusterName string `json:"clusterName"`
	// DisplayName is the project's name as shown to people, e.g. "Default".
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`
	// System marks the System project (kube-system, kube-public,
	// clustersync-system, ingress-nginx).
	// +optional
	System bool `json:"system,omitempty"`
}

// ProjectStatus lists the namespaces of a project.
type ProjectStatus struct {
	// Namespaces are the downstream namespaces annotated with this project.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
}

// Project groups namespaces of a registered cluster, as Rancher's
// projects: on Active a cluster gets "Default" (namespace default) and
// "System". A namespace moves to another project when its
// clustersync.io/project annotation is changed. Cluster-scoped; named
// "<cluster>-<project>".
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Display Name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Namespaces",type=string,JSONPath=`.status.namespaces`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the project.
	Spec ProjectSpec `json:"spec"`
	// Status is its namespaces.
	// +optional
	Status ProjectStatus `json:"status,omitempty"`
}

// ProjectList is a list of Projects.
//
// +kubebuilder:object:root=true
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Projects.
	Items []Project `json:"items"`
}

// ClusterRegistrationTokenSpec names the cluster a token registers.
type ClusterRegistrationTokenSpec struct {
	// ClusterName is the Cluster the token registers.
	// +kubebuilder:validation:MinLength=1
	ClusterName string `json:"clusterName"`
}

// ClusterRegistrationTokenStatus holds the tokens and the commands that
// use them.
type ClusterRegistrationTokenStatus struct {
	// Token is the current token: the secret part of the import URL
	// /v1/import/<token>_<cluster>.yaml and the agent's credential.
	// +optional
	Token string `json:"token,omitempty"`
	// ExpiresAt is when Token stops being valid; it is rotated before.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// PreviousToken is the token before the last rotation, still valid
	// until PreviousValidUntil so that a running agent is not cut off.
	// +optional
	PreviousToken string `json:"previousToken,omitempty"`
	// PreviousValidUntil is the end of PreviousToken's grace period.
	// +optional
	PreviousValidUntil *metav1.Time `json:"previousValidUntil,omitempty"`
	// ManifestURL is the import manifest's URL.
	// +optional
	ManifestURL string `json:"manifestURL,omitempty"`
	// Command applies the manifest: kubectl apply -f <ManifestURL>.
	// +optional
	Command string `json:"command,omitempty"`
	// InsecureCommand is the variant for a server with a self-signed
	// certificate: curl --insecure -sfL <ManifestURL> | kubectl apply -f -.
	// +optional
	InsecureCommand string `json:"insecureCommand,omitempty"`
}

// ClusterRegistrationToken is the registration token of a registered
// cluster, as Rancher's: it lives in namespace clustersync-global-data,
// named after the cluster, and is rotated by the management server.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Expires",type=date,JSONPath=`.status.expiresAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterRegistrationToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec names the cluster.
	Spec ClusterRegistrationTokenSpec `json:"spec"`
	// Status holds the tokens.
	// +optional
	Status ClusterRegistrationTokenStatus `json:"status,omitempty"`
}

// ClusterRegistrationTokenList is a list of ClusterRegistrationTokens.
//
// +kubebuilder:object:root=true
type ClusterRegistrationTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the tokens.
	Items []ClusterRegistrationToken `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Project{}, &ProjectList{}, &ClusterRegistrationToken{}, &ClusterRegistrationTokenList{})
}
