package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Config is the whole configuration file of a virtual cluster.
type Config struct {
	// Sync says which resources are synced between the virtual and the host
	// cluster, and how (vCluster's `sync:`).
	Sync Sync `json:"sync"`
	// ControlPlane configures the virtual cluster's control plane
	// (vCluster's `controlPlane:`).
	ControlPlane ControlPlane `json:"controlPlane"`
	// Syncer tunes clustersync's syncer; it has no vCluster counterpart.
	Syncer Syncer `json:"syncer"`
	// Policies are the rules enforced on the virtual cluster's tenants
	// (vCluster's `policies:`, on by default in clustersync).
	Policies Policies `json:"policies"`
	// ExportKubeConfig says which kubeconfigs of the virtual cluster the
	// syncer writes into host Secrets, and with what credentials
	// (vCluster's `exportKubeConfig:`).
	ExportKubeConfig ExportKubeConfig `json:"exportKubeConfig"`
	// RBAC is the Role and ClusterRole of the control plane pod (vCluster's
	// `rbac:`).
	RBAC RBAC `json:"rbac"`
	// Networking is the virtual cluster's DNS domain and how its DNS
	// reaches the host's names.
	Networking Networking `json:"networking"`
	// Experimental is vCluster's experimental section, of which
	// clustersync acts on deploy.vcluster: the manifests and Helm charts
	// applied in every new virtual cluster (internal/virtual/apps).
	Experimental Experimental `json:"experimental"`
	// Integrations is vCluster's integrations section, of which
	// clustersync acts on metricsServer.
	Integrations Integrations `json:"integrations"`

	// The other top-level sections of vCluster's vcluster.yaml (0.2x,
	// 0.3x): accepted as written, so that a vCluster file is usable
	// unchanged, and not acted on. Their content is checked against
	// vCluster's keys (vcluster-keys.json); NoEffect lists what they set
	// to other than vCluster's defaults.
	Plugins      any `json:"plugins,omitempty" config:"vcluster"`
	Plugin       any `json:"plugin,omitempty" config:"vcluster"`
	External     any `json:"external,omitempty" config:"vcluster"`
	Telemetry    any `json:"telemetry,omitempty" config:"vcluster"`
	Logging      any `json:"logging,omitempty" config:"vcluster"`
	Deploy       any `json:"deploy,omitempty" config:"vcluster"`
	PrivateNodes any `json:"privateNodes,omitempty" config:"vcluster"`
	SleepMode    any `json:"sleepMode,omitempty" config:"vcluster"`
	ServiceCIDR  any `json:"serviceCIDR,omitempty" config:"vcluster"`
	Pro          any `json:"pro,omitempty" config:"vcluster"`

	// noted are the paths of the vCluster keys Parse accepted that are set
	// to a value no vCluster release gives them by default and that
	// clustersync does not act on (NoEffect).
	noted []string
}

// Sync describes how to sync resources from the virtual cluster to the host
// cluster and back.
type Sync struct {
	// ToHost configures resources synced from the virtual cluster to the host
	// cluster.
	ToHost ToHost `json:"toHost"`
	// FromHost configures resources synced from the host cluster to the
	// virtual cluster.
	FromHost FromHost `json:"fromHost"`
}

// ToHost configures the resources that are created in the virtual cluster
// and synced to the host cluster (and back).
type ToHost struct {
	// Pods defines if pods created within the virtual cluster are synced to
	// the host cluster.
	Pods SyncPods `json:"pods"`
	// Secrets defines if secrets created within the virtual cluster are
	// synced to the host cluster.
	Secrets SelectiveSync `json:"secrets"`
	// ConfigMaps defines if config maps created within the virtual cluster
	// are synced to the host cluster.
	ConfigMaps SelectiveSync `json:"configMaps"`
	// Ingresses defines if ingresses created within the virtual cluster are
	// synced to the host cluster.
	Ingresses EnableSwitchWithTranslate `json:"ingresses"`
	// Services defines if services created within the virtual cluster are
	// synced to the host cluster.
	Services EnableSwitchWithTranslate `json:"services"`
	// Endpoints defines if endpoints created within the virtual cluster are
	// synced to the host cluster.
	Endpoints EnableSwitchWithTranslate `json:"endpoints"`
	// EndpointSlices defines if endpoint slices created within the virtual
	// cluster are synced to the host cluster.
	EndpointSlices EnableSwitchWithTranslate `json:"endpointSlices"`
	// NetworkPolicies defines if network policies created within the
	// virtual cluster are synced to the host cluster.
	NetworkPolicies EnableSwitchWithTranslate `json:"networkPolicies"`
	// PersistentVolumeClaims defines if persistent volume claims created
	// within the virtual cluster are synced to the host cluster.
	PersistentVolumeClaims EnableSwitchWithTranslate `json:"persistentVolumeClaims"`
	// PersistentVolumes defines if persistent volumes created within the
	// virtual cluster are synced to the host cluster.
	PersistentVolumes EnableSwitchWithTranslate `json:"persistentVolumes"`
	// VolumeSnapshots defines if volume snapshots created within the virtual
	// cluster are synced to the host cluster.
	VolumeSnapshots EnableSwitchWithTranslate `json:"volumeSnapshots"`
	// StorageClasses defines if storage classes created within the virtual
	// cluster are synced to the host cluster.
	StorageClasses EnableSwitchWithTranslate `json:"storageClasses"`
	// ServiceAccounts defines if service accounts created within the virtual
	// cluster are synced to the host cluster.
	ServiceAccounts EnableSwitchWithTranslate `json:"serviceAccounts"`
	// PodDisruptionBudgets defines if pod disruption budgets created within
	// the virtual cluster are synced to the host cluster.
	PodDisruptionBudgets EnableSwitchWithTranslate `json:"podDisruptionBudgets"`
	// PriorityClasses defines if priority classes created within the virtual
	// cluster are synced to the host cluster.
	PriorityClasses EnableSwitchWithTranslate `json:"priorityClasses"`
	// CustomResources defines which custom resources are synced from the
	// virtual cluster to the host cluster, keyed by resource name (for
	// example "widgets.example.com").
	CustomResources map[string]ToHostCustomResource `json:"customResources"`
	// GatewayAPI syncs the tenant's Gateway API objects to the host
	// (vCluster 0.35+; docs/configuration.md, "sync.toHost.gatewayApi").
	GatewayAPI GatewayAPI `json:"gatewayApi"`

	// The other keys of vCluster's sync.toHost: accepted, not acted on
	// (NoEffect lists them). clustersync syncs VolumeSnapshotContents with
	// volumeSnapshots.
	VolumeSnapshotContents any `json:"volumeSnapshotContents,omitempty" config:"vcluster"`
	Namespaces             any `json:"namespaces,omitempty" config:"vcluster"`
	ResourceClaims         any `json:"resourceClaims,omitempty" config:"vcluster"`
	ResourceClaimTemplates any `json:"resourceClaimTemplates,omitempty" config:"vcluster"`
}

// ToHostCustomResource configures the sync of one custom resource kind to
// the host cluster.
type ToHostCustomResource struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// Scope is the kind's scope as vCluster writes it: "" or "Namespaced";
	// only namespaced kinds are synced to the host.
	Scope string `json:"scope,omitempty"`
	// Translate lists the patches applied to synced objects; `patches`
	// is the same key as current vCluster spells it.
	Translate []Patch `json:"translate" config:"alias=patches"`
}

// FromHost configures the resources that are synced read-only from the host
// cluster into the virtual cluster, but not back.
type FromHost struct {
	// Nodes defines if real host nodes are synced into the virtual cluster.
	Nodes SyncNodes `json:"nodes"`
	// Events defines if events are synced from the host cluster.
	Events FromHostSwitch `json:"events"`
	// IngressClasses defines if ingress classes are synced from the host
	// cluster.
	IngressClasses FromHostSelectableSwitch `json:"ingressClasses"`
	// RuntimeClasses defines if runtime classes are synced from the host
	// cluster.
	RuntimeClasses FromHostSelectableSwitch `json:"runtimeClasses"`
	// PriorityClasses defines if priority classes are synced from the host
	// cluster.
	PriorityClasses FromHostSelectableSwitch `json:"priorityClasses"`
	// StorageClasses defines if storage classes are synced from the host
	// cluster; "auto" enables it when the virtual scheduler is enabled
	// (controlPlane.advanced.virtualScheduler.enabled).
	StorageClasses FromHostSelectableAutoSwitch `json:"storageClasses"`
	// CSINodes defines if CSI nodes are synced from the host cluster; "auto"
	// enables it when the virtual scheduler is enabled
	// (controlPlane.advanced.virtualScheduler.enabled).
	CSINodes FromHostAutoSwitch `json:"csiNodes"`
	// CSIDrivers defines if CSI drivers are synced from the host cluster;
	// "auto" enables it when the virtual scheduler is enabled
	// (controlPlane.advanced.virtualScheduler.enabled).
	CSIDrivers FromHostAutoSwitch `json:"csiDrivers"`
	// CSIStorageCapacities defines if CSI storage capacities are synced from
	// the host cluster; "auto" enables it when the virtual scheduler is
	// enabled (controlPlane.advanced.virtualScheduler.enabled).
	CSIStorageCapacities FromHostAutoSwitch `json:"csiStorageCapacities"`
	// CustomResources defines which custom resources are synced read-only
	// from the host cluster, keyed by resource name (for example
	// "widgets.example.com").
	CustomResources map[string]FromHostCustomResource `json:"customResources"`

	// ConfigMaps shows the host ConfigMaps that mappings.byName names in
	// the virtual cluster, read-only (the host's kube-root-ca.crt never).
	ConfigMaps FromHostMapped `json:"configMaps"`
	// Secrets shows the host Secrets that mappings.byName names in the
	// virtual cluster, read-only.
	Secrets FromHostMapped `json:"secrets"`
	// GatewayClasses shows the host's GatewayClasses (those Selector picks)
	// read-only in the virtual cluster, under their own names, so that the
	// tenant's Gateways can name them; also on with Gateways.Enabled or
	// sync.toHost.gatewayApi.enabled.
	GatewayClasses FromHostSelectableSwitch `json:"gatewayClasses"`
	// Gateways shows the host Gateways that Mappings name read-only in the
	// virtual cluster, so that the tenant's routes can attach to a shared
	// gateway.
	Gateways FromHostGateways `json:"gateways"`

	// The other keys of vCluster's sync.fromHost: accepted, not acted on
	// (NoEffect lists them). clustersync shows the host's
	// VolumeSnapshotClasses with sync.toHost.volumeSnapshots.
	VolumeSnapshotClasses any `json:"volumeSnapshotClasses,omitempty" config:"vcluster"`
	DeviceClasses         any `json:"deviceClasses,omitempty" config:"vcluster"`
}

// GatewayAPI is sync.toHost.gatewayApi: which of the tenant's Gateway API
// objects (gateway.networking.k8s.io/v1) reach the host. Enabled turns
// on Gateways and HTTPRoutes (and the host's GatewayClasses shown in the
// tenant); TLSRoutes and BackendTLSPolicies only by their own keys.
type GatewayAPI struct {
	// Enabled turns on Gateways, HTTPRoutes and the host's GatewayClasses.
	Enabled bool `json:"enabled"`
	// Patches is vCluster's umbrella patches key, which vCluster validates
	// and applies to no kind: accepted, not acted on; each kind's own
	// patches apply.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// HTTPRoutes syncs the tenant's HTTPRoutes.
	HTTPRoutes EnableSwitchWithTranslate `json:"httpRoutes"`
	// Gateways syncs the tenant's Gateways.
	Gateways EnableSwitchWithTranslate `json:"gateways"`
	// TLSRoutes syncs the tenant's TLSRoutes.
	TLSRoutes EnableSwitchWithTranslate `json:"tlsRoutes"`
	// BackendTLSPolicies syncs the tenant's BackendTLSPolicies.
	BackendTLSPolicies EnableSwitchWithTranslate `json:"backendTLSPolicies"`
	// ReferenceGrants says how the tenant's ReferenceGrants are used.
	ReferenceGrants ReferenceGrantsSwitch `json:"referenceGrants"`
}

// ReferenceGrantsSwitch is sync.toHost.gatewayApi.referenceGrants. The
// tenant's ReferenceGrants are always read in the virtual cluster, where
// they authorize the cross-namespace references of its routes; they are
// never copied to the host, where every copy lives in one host namespace
// and a grant would authorize nothing (vCluster copies them only with its
// namespace sync).
type ReferenceGrantsSwitch struct {
	// Enabled is true, false or "auto" (the default); all three mean the
	// same in clustersync.
	Enabled AutoSwitch `json:"enabled"`
	// Patches are vCluster's patches of host copies: accepted, not acted
	// on (there are none).
	Patches any `json:"patches,omitempty" config:"vcluster"`
}

// FromHostGateways is sync.fromHost.gateways: host Gateways shown
// read-only in the virtual cluster.
type FromHostGateways struct {
	// Enabled defines if this option is enabled; it needs Mappings.
	Enabled bool `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// Selector, when set, is what a host Gateway picked by a namespace/*
	// mapping must match (one named exactly needs no match).
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Mappings map host "namespace/name" or "namespace/*" to the virtual
	// "namespace/name" or "namespace/*" the copy is shown under.
	Mappings FromHostMappings `json:"mappings"`
	// AllowedRoutes is the policy shown as the copies' listeners'
	// allowedRoutes and enforced on the tenant's routes that attach.
	AllowedRoutes GatewayAllowedRoutes `json:"allowedRoutes"`
	// Status says what of the host Gateway's status is shown.
	Status GatewayImportStatus `json:"status"`
	// Metadata says what of the host Gateway's metadata is shown.
	Metadata GatewayImportMetadata `json:"metadata"`
	// Sanitize hides host details from the copies.
	Sanitize GatewayImportSanitize `json:"sanitize"`
}

// GatewayAllowedRoutes is sync.fromHost.gateways.allowedRoutes.
type GatewayAllowedRoutes struct {
	// DefaultVirtualNamespacePolicy is the policy of every imported
	// Gateway without an override; unset: routes of the copy's own
	// virtual namespace only (Same).
	DefaultVirtualNamespacePolicy *GatewayVirtualNamespacePolicy `json:"defaultVirtualNamespacePolicy,omitempty"`
	// Overrides set the policy of single host Gateways.
	Overrides []GatewayAllowedRoutesOverride `json:"overrides,omitempty"`
}

// GatewayAllowedRoutesOverride is the policy of one host Gateway.
type GatewayAllowedRoutesOverride struct {
	// HostNamespace and Name name the host Gateway; a mapping must cover it.
	HostNamespace string `json:"hostNamespace,omitempty"`
	Name          string `json:"name,omitempty"`
	// VirtualNamespacePolicy is the policy of its copy.
	VirtualNamespacePolicy GatewayVirtualNamespacePolicy `json:"virtualNamespacePolicy,omitempty"`
	// AllowedHostnames, when set, are the only hostnames the tenant's
	// routes on it may claim: DNS names or "*." wildcards.
	AllowedHostnames []string `json:"allowedHostnames,omitempty"`
}

// GatewayVirtualNamespacePolicy says which virtual namespaces' routes may
// attach: From is All, Same or Selector (Selector then picks namespaces
// by their labels).
type GatewayVirtualNamespacePolicy struct {
	From     string                `json:"from,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// GatewayImportStatus is sync.fromHost.gateways.status.
type GatewayImportStatus struct {
	// ExposeAddresses shows the host Gateway's status.addresses.
	ExposeAddresses bool `json:"exposeAddresses,omitempty"`
}

// GatewayImportMetadata is sync.fromHost.gateways.metadata.
type GatewayImportMetadata struct {
	// ExposeSourceGateway annotates each copy with the host Gateway's
	// namespace/name (vcluster.loft.sh/source-gateway, vCluster's key).
	ExposeSourceGateway bool `json:"exposeSourceGateway,omitempty"`
}

// GatewayImportSanitize is sync.fromHost.gateways.sanitize: what of the
// host Gateway the copies hide (both by default, as in vCluster).
type GatewayImportSanitize struct {
	// CertificateRefs hides the listeners' tls.certificateRefs (host
	// Secrets); a Terminate listener then carries the TLS option
	// vcluster.loft.sh/certificate-refs-sanitized so the copy stays valid.
	CertificateRefs bool `json:"certificateRefs"`
	// Infrastructure hides spec.infrastructure.
	Infrastructure bool `json:"infrastructure"`
}

// FromHostMapped turns on the read-only copies of the host objects of one
// namespaced kind that Mappings name: a host change is copied within
// seconds, a tenant's edit or delete of a copy is put back, a host
// deletion removes the copy, a missing virtual namespace is created, and a
// tenant's own object of a copy's name is left alone (with a Warning event
// FromHostConflict on it).
type FromHostMapped struct {
	// Enabled defines if this option is enabled; it needs Mappings.
	Enabled bool `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// Mappings say which host objects are copied, and under which virtual
	// namespace and name.
	Mappings FromHostMappings `json:"mappings"`
}

// FromHostSwitch turns the read-only copies of one host kind on or off.
type FromHostSwitch struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
}

// FromHostSelectableSwitch turns the read-only copies of one host kind on
// or off.
type FromHostSelectableSwitch struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// Selector picks the host objects copied by their labels (matchLabels
	// and matchExpressions); empty copies every object of the kind.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// FromHostAutoSwitch turns the read-only copies of one host kind on, off
// or leaves it to clustersync ("auto").
type FromHostAutoSwitch struct {
	// Enabled is true, false or "auto".
	Enabled AutoSwitch `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
}

// FromHostSelectableAutoSwitch is FromHostAutoSwitch with vCluster's
// selector.
type FromHostSelectableAutoSwitch struct {
	// Enabled is true, false or "auto".
	Enabled AutoSwitch `json:"enabled"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// Selector picks the host objects copied by their labels (matchLabels
	// and matchExpressions); empty copies every object of the kind.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// FromHostCustomResource configures the read-only copies of one custom
// resource kind.
type FromHostCustomResource struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// Scope is the kind's scope as vCluster writes it: "", "Cluster" or
	// "Namespaced"; only cluster-scoped kinds are copied.
	Scope string `json:"scope,omitempty"`
	// Patches are vCluster's patches of the copies: accepted, not acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
	// Mappings say which objects of a namespaced kind are copied, and to
	// which virtual namespace and name.
	Mappings FromHostMappings `json:"mappings"`
}

// FromHostMappings maps host objects of a namespaced kind to their virtual
// copies (fromhost.ParseMappings in
// internal/virtual/resources/fromhost/mappings.go reads them).
type FromHostMappings struct {
	// ByName maps "hostNamespace/name" (or "hostNamespace/*", "" for every
	// object of the virtual cluster's host namespace, "/name" for one of
	// them) to "virtualNamespace/name" (or "virtualNamespace/*").
	ByName map[string]string `json:"byName"`
}

// EnableSwitch turns the sync of one resource kind on or off.
type EnableSwitch struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
}

// EnableSwitchWithTranslate turns the sync of one resource kind on or off
// and lists patches applied to its objects on the way.
type EnableSwitchWithTranslate struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// Translate lists the patches applied to synced objects; `patches`
	// is the same key as current vCluster spells it.
	Translate []Patch `json:"translate" config:"alias=patches"`
}

// SelectiveSync configures the sync of a kind that, by default, is synced
// only when another synced object needs it (secrets and config maps).
type SelectiveSync struct {
	// Enabled defines if this option is enabled.
	Enabled bool `json:"enabled"`
	// All syncs every object of the kind instead of only the ones that are
	// referenced by other synced objects.
	All bool `json:"all"`
	// Translate lists the patches applied to synced objects; `patches`
	// is the same key as current vCluster spells it.
	Translate []Patch `json:"translate" config:"alias=patches"`
}

// EnableAutoSwitch turns the sync of one resource kind on, off, or leaves
// the decision to clustersync ("auto").
type EnableAutoSwitch struct {
	// Enabled is true, false or "auto".
	Enabled AutoSwitch `json:"enabled"`
}

// SyncPods configures the sync of pods to the host cluster.
type SyncPods struct {
	// Enabled defines if pod syncing is enabled.
	Enabled bool `json:"enabled"`
	// TranslateImage maps an image used in the virtual cluster to the image
	// used instead on the host cluster.
	TranslateImage map[string]string `json:"translateImage"`
	// EnforceTolerations are tolerations added to every pod synced to the
	// host cluster.
	EnforceTolerations []string `json:"enforceTolerations"`
	// UseSecretsForSATokens stores the service account tokens generated by
	// the virtual cluster in secrets instead of pod annotations, which
	// anyone who may read host pods reads. clustersync's default is true,
	// vCluster's false.
	UseSecretsForSATokens bool `json:"useSecretsForSATokens"`
	// RewriteHosts configures the init container that rewrites /etc/hosts of
	// stateful set pods to the FQDN expected inside the virtual cluster.
	RewriteHosts RewriteHosts `json:"rewriteHosts"`
	// Translate lists the patches applied to synced pods; `patches` is
	// the same key as current vCluster spells it.
	Translate []Patch `json:"translate" config:"alias=patches"`

	// The other keys of vCluster's sync.toHost.pods: accepted, not acted
	// on (NoEffect lists them).
	RuntimeClassName  any `json:"runtimeClassName,omitempty" config:"vcluster"`
	PriorityClassName any `json:"priorityClassName,omitempty" config:"vcluster"`
	HybridScheduling  any `json:"hybridScheduling,omitempty" config:"vcluster"`
}

// RewriteHosts configures the rewrite of /etc/hosts in stateful set pods.
type RewriteHosts struct {
	// Enabled defines if stateful set pods get the rewrite init container.
	Enabled bool `json:"enabled"`
	// InitContainer configures the init container that does the rewrite.
	InitContainer RewriteHostsInitContainer `json:"initContainer"`
}

// RewriteHostsInitContainer configures the init container added to stateful
// set pods to rewrite /etc/hosts.
type RewriteHostsInitContainer struct {
	// Image is the image of the init container: a string, or an object
	// {registry, repository, tag} as current vCluster writes it.
	Image ImageRef `json:"image"`
	// Resources are the compute resources of the init container.
	Resources Resources `json:"resources"`
}

// Resources are the compute resources of a container, keyed by resource
// name ("cpu", "memory", ...).
type Resources struct {
	// Limits are the resource limits of the container.
	Limits map[string]resource.Quantity `json:"limits"`
	// Requests are the minimal resources the container is scheduled with.
	Requests map[string]resource.Quantity `json:"requests"`
}

// SyncNodes configures the sync of real nodes from the host cluster. When
// disabled, the virtual cluster shows fake nodes instead.
type SyncNodes struct {
	// Enabled defines if real host nodes are synced.
	Enabled bool `json:"enabled"`
	// SyncBackChanges syncs labels and taints set in the virtual cluster
	// back to the host node.
	SyncBackChanges bool `json:"syncBackChanges"`
	// ClearImageStatus erases the image list from synced node status.
	ClearImageStatus bool `json:"clearImageStatus"`
	// Selector picks which host nodes are synced.
	Selector NodeSelector `json:"selector"`
	// Patches are vCluster's patches of the node copies: accepted, not
	// acted on.
	Patches any `json:"patches,omitempty" config:"vcluster"`
}

// NodeSelector picks the host nodes synced into the virtual cluster.
type NodeSelector struct {
	// All syncs every host node instead of only the nodes that run pods of
	// the virtual cluster.
	All bool `json:"all"`
	// Labels syncs the host nodes carrying these labels; it also becomes the
	// node selector of pods synced to the host cluster.
	Labels map[string]string `json:"labels"`
}

// Patch is one entry of a `translate` list: a change applied to a field of
// a synced object. It is plain data; nothing in this package evaluates it.
type Patch struct {
	// Path is the path of the targeted field within the object. If the
	// path is not found, the patch is not applied.
	Path string `json:"path"`
	// Expression transforms the value on the way to the host cluster with
	// the given JavaScript expression.
	Expression string `json:"expression"`
	// ReverseExpression transforms the value on the way back to the virtual
	// cluster with the given JavaScript expression.
	ReverseExpression string `json:"reverseExpression"`
	// Reference, when set, treats the value as a reference to another object
	// and rewrites it like other references are rewritten.
	Reference *PatchReference `json:"reference,omitempty"`
	// Labels, when set, treats the value as a label selector.
	Labels *PatchLabels `json:"labels,omitempty"`
}

// PatchReference describes the object a patched field refers to.
type PatchReference struct {
	// APIVersion is the apiVersion of the referenced object.
	APIVersion string `json:"apiVersion"`
	// APIVersionPath is an optional relative path to read the apiVersion
	// from; APIVersion is the fallback.
	APIVersionPath string `json:"apiVersionPath"`
	// Kind is the kind of the referenced object.
	Kind string `json:"kind"`
	// KindPath is an optional relative path to read the kind from; Kind is
	// the fallback.
	KindPath string `json:"kindPath"`
	// NamePath is an optional relative path to the referenced name.
	NamePath string `json:"namePath"`
	// NamespacePath is an optional relative path to the referenced
	// namespace; the object's own metadata.namespace is the fallback.
	NamespacePath string `json:"namespacePath"`
}

// PatchLabels marks a patched field as a label selector. It has no options.
type PatchLabels struct{}

// ControlPlane configures the virtual cluster's control plane.
type ControlPlane struct {
	// Distro is vCluster's choice of Kubernetes distribution; clustersync
	// runs upstream Kubernetes (k8s) and acts on distro.k8s.scheduler
	// only. Its other keys are accepted and noted (NoEffect).
	Distro Distro `json:"distro"`

	// The other keys of vCluster's controlPlane: accepted as written, not
	// acted on. Their content is checked against vCluster's
	// keys; NoEffect lists what they set to other than vCluster's defaults.
	HostPathMapper any `json:"hostPathMapper,omitempty" config:"vcluster"`
	Endpoint       any `json:"endpoint,omitempty" config:"vcluster"`
	Standalone     any `json:"standalone,omitempty" config:"vcluster"`

	// CoreDNS is the virtual cluster's DNS server, a container of the
	// control plane pod in clustersync (vCluster's embedded CoreDNS).
	CoreDNS CoreDNS `json:"coredns"`
	// ServiceMonitor has the host's Prometheus Operator scrape the API
	// server's metrics (charts/virtual-cluster/templates/servicemonitor.yaml).
	ServiceMonitor ServiceMonitor `json:"serviceMonitor"`
	// Service is the host Service of the API server, how the host's pods,
	// the syncer and `virtual connect` reach it, and, as a NodePort or
	// LoadBalancer, how clients outside the host do.
	Service ControlPlaneService `json:"service"`
	// Ingress publishes the API server under a host name through the
	// host's ingress controller, TLS passed through to the API server.
	Ingress ControlPlaneIngress `json:"ingress"`
	// BackingStore configures where the virtual cluster stores its objects.
	BackingStore BackingStore `json:"backingStore"`
	// StatefulSet configures the host StatefulSet that runs the control
	// plane (charts/virtual-cluster). The local-process mode
	// (`virtual create --local`) ignores it.
	StatefulSet ControlPlaneStatefulSet `json:"statefulSet"`
	// Proxy configures how the API server is reached.
	Proxy ControlPlaneProxy `json:"proxy"`
	// Advanced holds the control plane's less common settings.
	Advanced ControlPlaneAdvanced `json:"advanced"`
}

// ServiceMonitor is vCluster's controlPlane.serviceMonitor: a
// monitoring.coreos.com/v1 ServiceMonitor vc-NAME in the host namespace
// that scrapes the API server's /metrics through the Service's https port
// every 30 s with the client certificate of Secret vc-NAME, as vCluster's
// chart does for its API server. The host must serve the kind (the
// Prometheus Operator's CRDs); `virtual create` and `upgrade` refuse
// beforehand when it does not.
type ServiceMonitor struct {
	// Enabled creates the ServiceMonitor.
	Enabled bool `json:"enabled,omitempty"`
	// Labels are labels of the ServiceMonitor besides the chart's own
	// (app, release, …); a Prometheus selects ServiceMonitors by label
	// (its serviceMonitorSelector), and a release label of yours wins.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are annotations of the ServiceMonitor.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Networking is vCluster's networking section.
type Networking struct {
	// Advanced holds the DNS domain and the fallback to the host's DNS.
	Advanced NetworkingAdvanced `json:"advanced"`

	// ReplicateServices publishes tenant Services in host namespaces and
	// host Services in the virtual cluster.
	ReplicateServices ReplicateServices `json:"replicateServices"`

	// The other keys of vCluster's networking: accepted, not acted on.
	ServiceCIDR any `json:"serviceCIDR,omitempty" config:"vcluster"`
	PodCIDR     any `json:"podCIDR,omitempty" config:"vcluster"`
	ResolveDNS  any `json:"resolveDNS,omitempty" config:"vcluster"`
}

// ReplicateServices is vCluster's networking.replicateServices
// (internal/virtual/resources/services/replicate.go).
type ReplicateServices struct {
	// ToHost publishes each tenant Service From ("namespace/name" in the
	// virtual cluster) as host Service To ("namespace/name", any host
	// namespace the chart may write): a Service without selector whose
	// EndpointSlices hold the tenant pods behind From, so host pods reach
	// them by To's name.
	ToHost []ServiceMapping `json:"toHost"`
	// FromHost shows each host Service From ("namespace/name" in the host)
	// as tenant Service To ("namespace/name" in the virtual cluster): a
	// headless Service whose EndpointSlice holds the host Service's
	// cluster IP (its endpoints when it is headless), so tenant pods reach
	// it by To's name.
	FromHost []ServiceMapping `json:"fromHost"`
}

// ServiceMapping is one Service of ReplicateServices.
type ServiceMapping struct {
	// From is the Service replicated, "namespace/name".
	From string `json:"from"`
	// To is the Service made, "namespace/name".
	To string `json:"to"`
}

// NetworkingAdvanced is vCluster's networking.advanced.
type NetworkingAdvanced struct {
	// ClusterDomain is the virtual cluster's DNS domain: its DNS server
	// answers SERVICE.NAMESPACE.svc.DOMAIN, tenant pods search
	// NAMESPACE.svc.DOMAIN, svc.DOMAIN and DOMAIN, and the API server's
	// certificate covers kubernetes.default.svc.DOMAIN. A DNS subdomain;
	// the default is cluster.local.
	ClusterDomain string `json:"clusterDomain"`
	// FallbackHostCluster has the virtual cluster's DNS server ask the
	// host's DNS for a name of the cluster domain that the virtual cluster
	// does not have, so that a tenant pod reaches a host Service as
	// SERVICE.HOSTNAMESPACE (what vCluster does). The tenant's own Services
	// win; the NetworkPolicy of policies.networkPolicy still decides
	// whether traffic may go there (workload.egress can allow it).
	FallbackHostCluster bool `json:"fallbackHostCluster,omitempty"`

	// ProxyKubelets lets node exporters and Prometheus in the virtual
	// cluster read the kubelet of each fake node, limited to the tenant's
	// own pods (internal/virtual/kubeletproxy, Tenant).
	ProxyKubelets ProxyKubelets `json:"proxyKubelets"`
}

// ProxyKubelets is networking.advanced.proxyKubelets. Both are off by
// default in clustersync (vCluster: on): the syncer then reads the host
// nodes' kubelets through the host API server (nodes/proxy, which the
// chart grants only with one of them on).
type ProxyKubelets struct {
	// ByHostname gives each fake node the address
	// NAME.nodes.vcluster.com (type Hostname), which the virtual cluster's
	// DNS resolves to its control plane Service, port 10250.
	ByHostname bool `json:"byHostname"`
	// ByIP gives each fake node a host Service of its own
	// (VCLUSTER-node-NAME, port 10250), whose cluster IP is the node's
	// InternalIP.
	ByIP bool `json:"byIP"`
}

// Integrations is vCluster's integrations section.
type Integrations struct {
	// MetricsServer is the virtual cluster's metrics.k8s.io API (kubectl
	// top), which the syncer serves from the host's metrics API
	// (internal/virtual/metricsapi).
	MetricsServer MetricsServer `json:"metricsServer"`

	// The other integrations of vCluster's: accepted, not acted on.
	ArgoCD          any `json:"argoCD,omitempty" config:"vcluster"`
	CertManager     any `json:"certManager,omitempty" config:"vcluster"`
	ExternalSecrets any `json:"externalSecrets,omitempty" config:"vcluster"`
	Istio           any `json:"istio,omitempty" config:"vcluster"`
	KubeVirt        any `json:"kubeVirt,omitempty" config:"vcluster"`
	Netris          any `json:"netris,omitempty" config:"vcluster"`
}

// MetricsServer is vCluster's integrations.metricsServer.
type MetricsServer struct {
	// Enabled serves the metrics API in the virtual cluster: the host's
	// metrics of the tenant's own pods and of the nodes it sees, under
	// their virtual names. Off, the API stays registered and refuses every
	// request saying it is off, so that kubectl top says why.
	// clustersync's default is true, vCluster's false.
	Enabled bool `json:"enabled"`
	// Nodes serves node metrics (kubectl top node).
	Nodes bool `json:"nodes"`
	// Pods serves pod metrics (kubectl top pod).
	Pods bool `json:"pods"`

	// APIService is where vCluster finds the host's metrics-server
	// Service: accepted, not acted on (clustersync reads the host's
	// metrics API through the host's API server, wherever it is served).
	APIService any `json:"apiService,omitempty" config:"vcluster"`
}

// Experimental is vCluster's experimental section.
type Experimental struct {
	// Deploy is what is installed into the virtual cluster once its
	// control plane is ready.
	Deploy ExperimentalDeploy `json:"deploy"`

	// The other keys of vCluster's experimental section: accepted, not
	// acted on.
	DenyProxyRequests        any `json:"denyProxyRequests,omitempty" config:"vcluster"`
	Docker                   any `json:"docker,omitempty" config:"vcluster"`
	GenericSync              any `json:"genericSync,omitempty" config:"vcluster"`
	IsolatedControlPlane     any `json:"isolatedControlPlane,omitempty" config:"vcluster"`
	MultiNamespaceMode       any `json:"multiNamespaceMode,omitempty" config:"vcluster"`
	NodeMonitors             any `json:"nodeMonitors,omitempty" config:"vcluster"`
	Proxy                    any `json:"proxy,omitempty" config:"vcluster"`
	ReuseNamespace           any `json:"reuseNamespace,omitempty" config:"vcluster"`
	SleepMode                any `json:"sleepMode,omitempty" config:"vcluster"`
	SyncSettings             any `json:"syncSettings,omitempty" config:"vcluster"`
	VirtualClusterKubeConfig any `json:"virtualClusterKubeConfig,omitempty" config:"vcluster"`
}

// ExperimentalDeploy is vCluster's experimental.deploy.
type ExperimentalDeploy struct {
	// VCluster are the manifests and charts applied in the virtual
	// cluster.
	VCluster DeployVCluster `json:"vcluster"`

	// Host is vCluster's manifests applied in the host cluster: accepted,
	// not acted on.
	Host any `json:"host,omitempty" config:"vcluster"`
}

// DeployVCluster is vCluster's experimental.deploy.vcluster: what a
// platform team installs into every new virtual cluster. The syncer applies
// it once the virtual API server answers, retrying (1 s doubling to 1
// minute) until it succeeds, reports progress in the virtual cluster's
// ConfigMap kube-system/vcluster-deploy (annotation vcluster.loft.sh/status,
// vCluster's shape) and, in the chart, as events and the annotation
// clustersync.io/deploy-status of the control plane pod, and applies what
// changed when `virtual upgrade` changes it (docs/configuration.md,
// "experimental.deploy").
type DeployVCluster struct {
	// Manifests is multi-document YAML applied with server-side apply
	// (field manager clustersync-deploy); a namespaced object without a
	// namespace goes to "default"; an object dropped from the manifests
	// later is deleted.
	Manifests string `json:"manifests,omitempty"`
	// ManifestsTemplate is a Go template (text/template) of more manifests,
	// rendered with .Values (this configuration), .Release.Name (the
	// virtual cluster's name) and .Release.Namespace (its host
	// namespace), as vCluster renders it.
	ManifestsTemplate string `json:"manifestsTemplate,omitempty"`
	// Helm are the charts installed, in order, with Helm's Go SDK.
	Helm []DeployHelm `json:"helm"`
}

// DeployHelm is one chart of experimental.deploy.vcluster.helm.
type DeployHelm struct {
	// Chart is where the chart comes from (unless Bundle holds it).
	Chart DeployHelmChart `json:"chart"`
	// Release names the release: the chart's name in namespace "default"
	// unless set.
	Release DeployHelmRelease `json:"release"`
	// Values is a values.yaml of the release, as a string.
	Values string `json:"values,omitempty"`
	// Timeout bounds each install or upgrade, a Go duration (e.g. "5m");
	// the default is 180s, as vCluster's.
	Timeout string `json:"timeout,omitempty"`
	// Bundle is the chart archive (.tgz) in base64, used instead of
	// fetching Chart.
	Bundle string `json:"bundle,omitempty"`
}

// DeployHelmChart is where a chart of experimental.deploy comes from.
type DeployHelmChart struct {
	// Name is the chart's name in Repo.
	Name string `json:"name,omitempty"`
	// Repo is a chart repository's URL (http or https), or an OCI
	// registry path "oci://HOST/PATH" that holds Name.
	Repo string `json:"repo,omitempty"`
	// Insecure accepts a repository's certificate without checking it
	// and, for oci://, plain HTTP.
	Insecure bool `json:"insecure,omitempty"`
	// Version is the chart's version (a semver constraint); "" the
	// latest.
	Version string `json:"version,omitempty"`
	// Username and Password authenticate to Repo.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// DeployHelmRelease names the release of a chart of experimental.deploy.
type DeployHelmRelease struct {
	// Name is the release's name; "" is the chart's name.
	Name string `json:"name,omitempty"`
	// Namespace is the release's namespace in the virtual cluster,
	// created when missing; "" is "default".
	Namespace string `json:"namespace,omitempty"`
}

// DefaultDeployTimeout bounds an install or upgrade of
// experimental.deploy.vcluster.helm whose timeout is unset (vCluster's
// DefaultTimeOut, pkg/controllers/deploy/deploy.go).
const DefaultDeployTimeout = 180 * time.Second

// ReleaseName is the release h installs: Release.Name, else the chart's
// name.
func (h DeployHelm) ReleaseName() string {
	if h.Release.Name != "" {
		return h.Release.Name
	}
	return h.Chart.Name
}

// ReleaseNamespace is the namespace of the release h installs:
// Release.Namespace, else "default".
func (h DeployHelm) ReleaseNamespace() string {
	if h.Release.Namespace != "" {
		return h.Release.Namespace
	}
	return "default"
}

// TimeoutDuration is h's Timeout, DefaultDeployTimeout when unset (Validate
// refuses one that does not parse).
func (h DeployHelm) TimeoutDuration() time.Duration {
	if d, err := time.ParseDuration(h.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultDeployTimeout
}

// HasApps tells whether experimental.deploy.vcluster has anything to
// apply.
func (d DeployVCluster) HasApps() bool {
	return d.Manifests != "" || d.ManifestsTemplate != "" || len(d.Helm) > 0
}

// CoreDNS is vCluster's controlPlane.coredns. clustersync's DNS server is
// the coredns container of the control plane pod, as vCluster's embedded
// CoreDNS is; the keys of vCluster's CoreDNS Deployment and Service in the
// virtual cluster have no effect.
type CoreDNS struct {
	// Deployment is vCluster's CoreDNS Deployment, of which clustersync
	// reads the resources.
	Deployment CoreDNSDeployment `json:"deployment"`
	// OverwriteConfig is a Corefile of the user's that replaces the
	// default one, as in vCluster, adapted to the coredns container
	// (dns.UserCorefile in internal/virtual/dns/userfile.go): each
	// kubernetes block gets the virtual cluster's kubeconfig, a bare
	// health listens on :8180, reload is dropped (a changed Corefile
	// restarts the pod). Its server blocks listen on port 1053 and it
	// keeps health and ready; the plugins built in are those of
	// docs/configuration.md.
	OverwriteConfig string `json:"overwriteConfig,omitempty"`

	// The other keys of vCluster's controlPlane.coredns: accepted, not
	// acted on.
	Enabled            any `json:"enabled,omitempty" config:"vcluster"`
	Embedded           any `json:"embedded,omitempty" config:"vcluster"`
	OverwriteManifests any `json:"overwriteManifests,omitempty" config:"vcluster"`
	PriorityClassName  any `json:"priorityClassName,omitempty" config:"vcluster"`
	Security           any `json:"security,omitempty" config:"vcluster"`
	Service            any `json:"service,omitempty" config:"vcluster"`
}

// CoreDNSDeployment is vCluster's controlPlane.coredns.deployment.
type CoreDNSDeployment struct {
	// Resources are the coredns container's requests and limits,
	// completed with the chart's where silent; vCluster's default means
	// the chart's (VClusterDefaultMeansOurs).
	Resources Resources `json:"resources"`

	// The other keys of vCluster's Deployment: accepted, not acted on.
	Image                     any `json:"image,omitempty" config:"vcluster"`
	Replicas                  any `json:"replicas,omitempty" config:"vcluster"`
	NodeSelector              any `json:"nodeSelector,omitempty" config:"vcluster"`
	Affinity                  any `json:"affinity,omitempty" config:"vcluster"`
	Tolerations               any `json:"tolerations,omitempty" config:"vcluster"`
	TopologySpreadConstraints any `json:"topologySpreadConstraints,omitempty" config:"vcluster"`
	Labels                    any `json:"labels,omitempty" config:"vcluster"`
	Annotations               any `json:"annotations,omitempty" config:"vcluster"`
	Pods                      any `json:"pods,omitempty" config:"vcluster"`
}

// ControlPlaneService is vCluster's controlPlane.service.
type ControlPlaneService struct {
	// Enabled must be true: the Service is how everything reaches the API
	// server in clustersync (vCluster can do without it for its private
	// nodes and standalone modes).
	Enabled bool `json:"enabled"`
	// Labels are labels of the Service besides the chart's own (app,
	// release, app.kubernetes.io/…, helm.sh/chart,
	// vcluster.loft.sh/managed-by), which they cannot replace.
	Labels map[string]string `json:"labels"`
	// Annotations are annotations of the Service (a cloud's load balancer
	// settings, say).
	Annotations map[string]string `json:"annotations"`
	// HTTPSNodePort is the node port of the API server with spec.type
	// NodePort or LoadBalancer; 0 lets the host pick one.
	HTTPSNodePort int `json:"httpsNodePort"`
	// Spec is merged into the Service's spec: its type (ClusterIP,
	// NodePort or LoadBalancer), externalTrafficPolicy,
	// loadBalancerSourceRanges, loadBalancerClass, externalIPs, …; the
	// ports and the selector are the chart's.
	Spec *corev1.ServiceSpec `json:"spec,omitempty"`

	// KubeletNodePort is vCluster's node port of its kubelet proxy (for
	// networking.advanced.proxyKubelets): accepted, not acted on.
	KubeletNodePort any `json:"kubeletNodePort,omitempty" config:"vcluster"`
}

// ControlPlaneIngress is vCluster's controlPlane.ingress: an Ingress of
// the API server, as vCluster's chart makes it.
type ControlPlaneIngress struct {
	// Enabled creates the Ingress.
	Enabled bool `json:"enabled"`
	// Host is the host name clients reach the API server at; the API
	// server's certificate covers it.
	Host string `json:"host"`
	// PathType is the path type of the Ingress's one path, "/":
	// ImplementationSpecific, Prefix or Exact.
	PathType string `json:"pathType"`
	// Labels are labels of the Ingress besides the chart's own.
	Labels map[string]string `json:"labels"`
	// Annotations are annotations of the Ingress; the default ones
	// (vCluster's) make ingress-nginx pass TLS through to the API server,
	// which needs its --enable-ssl-passthrough.
	Annotations map[string]string `json:"annotations"`
	// Spec is the Ingress's spec (templates expanded, as vCluster's chart
	// does); without rules the chart gives it one for Host.
	Spec *networkingv1.IngressSpec `json:"spec,omitempty"`
}

// ControlPlaneAdvanced is vCluster's controlPlane.advanced.
type ControlPlaneAdvanced struct {
	// VirtualScheduler runs kube-scheduler in the virtual cluster's
	// control plane.
	VirtualScheduler VirtualScheduler `json:"virtualScheduler"`

	// ServiceAccount is the control plane pod's host ServiceAccount, as
	// which the syncer and the init step act on the host.
	ServiceAccount ControlPlaneServiceAccount `json:"serviceAccount"`
	// WorkloadServiceAccount is the host ServiceAccount the tenant's host
	// pods run as (unless sync.toHost.serviceAccounts gives each its own).
	WorkloadServiceAccount ControlPlaneServiceAccount `json:"workloadServiceAccount"`
	// HeadlessService is the StatefulSet's governing Service NAME-headless.
	HeadlessService ObjectMetadata `json:"headlessService"`
	// GlobalMetadata are annotations of every object the chart makes.
	GlobalMetadata GlobalMetadata `json:"globalMetadata"`
	// PodDisruptionBudget guards the control plane pod against voluntary
	// evictions (a node drain).
	PodDisruptionBudget PodDisruptionBudget `json:"podDisruptionBudget"`
	// DefaultImageRegistry, when set, replaces the registry of the images
	// clustersync runs (the control plane's, the rewrite-hosts init
	// container's), e.g. a mirror "registry.example.com/mirror" for a
	// host without access to ghcr.io; the tenant's images are theirs.
	DefaultImageRegistry string `json:"defaultImageRegistry"`

	// The other keys of vCluster's controlPlane.advanced: accepted as
	// written, not acted on. Their content is checked against
	// vCluster's keys; NoEffect lists what they set to other than
	// vCluster's defaults.
	Konnectivity           any `json:"konnectivity,omitempty" config:"vcluster"`
	Registry               any `json:"registry,omitempty" config:"vcluster"`
	CloudControllerManager any `json:"cloudControllerManager,omitempty" config:"vcluster"`
}

// ControlPlaneServiceAccount is vCluster's
// controlPlane.advanced.serviceAccount and .workloadServiceAccount: a host
// ServiceAccount of the virtual cluster.
type ControlPlaneServiceAccount struct {
	// Enabled makes it (the chart the control plane's, the syncer the
	// workloads'); false uses one that exists already, named Name.
	Enabled bool `json:"enabled"`
	// Name is its name; "" for vc-NAME (the control plane's) or
	// vc-workload-NAME (the workloads').
	Name string `json:"name"`
	// ImagePullSecrets are Secrets of the host namespace the kubelet pulls
	// images with for the pods that run as it (the workloads' gets the
	// control plane's too, as vCluster's chart gives them).
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets"`
	// Labels are its labels besides the chart's own.
	Labels map[string]string `json:"labels"`
	// Annotations are its annotations (with globalMetadata's).
	Annotations map[string]string `json:"annotations"`
}

// ObjectMetadata are labels and annotations of an object the chart makes.
type ObjectMetadata struct {
	// Labels are labels besides the chart's own, which they cannot
	// replace.
	Labels map[string]string `json:"labels"`
	// Annotations are annotations besides the chart's own.
	Annotations map[string]string `json:"annotations"`
}

// GlobalMetadata is vCluster's controlPlane.advanced.globalMetadata.
type GlobalMetadata struct {
	// Annotations go on every object the chart makes (the StatefulSet, its
	// Services, ServiceAccount, Ingress and PodDisruptionBudget); an
	// object's own annotations of the same key win.
	Annotations map[string]string `json:"annotations"`
}

// PodDisruptionBudget is vCluster's controlPlane.advanced.podDisruptionBudget.
type PodDisruptionBudget struct {
	// Enabled makes PodDisruptionBudget NAME of the control plane pod.
	Enabled bool `json:"enabled"`
	// MinAvailable is the number or percentage of control plane pods that
	// must stay (1 when neither it nor MaxUnavailable is set: a drain
	// waits until the pod can go, e.g. by virtual pause).
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable is the number or percentage that may go at once;
	// MinAvailable wins when both are set, as in vCluster's chart.
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// UnhealthyPodEvictionPolicy is IfHealthyBudget or AlwaysAllow; ""
	// for Kubernetes' default.
	UnhealthyPodEvictionPolicy string `json:"unhealthyPodEvictionPolicy"`
}

// WorkloadServiceAccountName is the host ServiceAccount the host pods of
// virtual cluster name run as: controlPlane.advanced.workloadServiceAccount.name,
// else vc-workload-NAME (vCluster's name).
func (c *Config) WorkloadServiceAccountName(name string) string {
	if n := c.ControlPlane.Advanced.WorkloadServiceAccount.Name; n != "" {
		return n
	}
	return "vc-workload-" + name
}

// Distro is vCluster's controlPlane.distro, of which clustersync reads
// one key; the others (k3s, k0s, the k8s components' images, flags and
// resources) are vCluster's keys without effect here.
type Distro struct {
	// K8S is the upstream Kubernetes distribution.
	K8S DistroK8S `json:"k8s"`
}

// DistroK8S is vCluster's controlPlane.distro.k8s.
type DistroK8S struct {
	// APIServer is kube-apiserver's.
	APIServer DistroComponent `json:"apiServer"`
	// ControllerManager is kube-controller-manager's.
	ControllerManager DistroComponent `json:"controllerManager"`
	// Scheduler is kube-scheduler's, and vCluster's other switch of the
	// virtual scheduler.
	Scheduler DistroScheduler `json:"scheduler"`
}

// DistroComponent is a component of vCluster's controlPlane.distro.k8s.
type DistroComponent struct {
	// ExtraArgs are flags added to the component's, e.g.
	// "--oidc-issuer-url=https://issuer.example.com"; the flags clustersync
	// sets itself and that the control plane needs as they are (where etcd
	// and the certificates are, the ports, the service range) are refused
	// (controlplane.CheckExtraArgs). A flag given twice takes its last value.
	ExtraArgs []string `json:"extraArgs"`

	// vCluster's switch and command of its own binary: accepted, not acted
	// on (clustersync always runs the component).
	Enabled any `json:"enabled,omitempty" config:"vcluster"`
	Command any `json:"command,omitempty" config:"vcluster"`
}

// DistroScheduler is vCluster's controlPlane.distro.k8s.scheduler.
type DistroScheduler struct {
	// Enabled runs the virtual scheduler, as
	// controlPlane.advanced.virtualScheduler.enabled does (vCluster takes
	// either: config.Config.IsVirtualSchedulerEnabled in vCluster's
	// config/config.go).
	Enabled bool `json:"enabled"`
	// ExtraArgs are flags added to kube-scheduler's (DistroComponent's).
	ExtraArgs []string `json:"extraArgs"`

	// Command is vCluster's command of its own binary: accepted, not
	// acted on.
	Command any `json:"command,omitempty" config:"vcluster"`
}

// VirtualScheduler is vCluster's controlPlane.advanced.virtualScheduler.
type VirtualScheduler struct {
	// Enabled runs kube-scheduler in the control plane: the virtual
	// cluster places its pods on the virtual copies of the host's nodes,
	// with the labels, taints and extended resources the tenant gave those
	// copies, and the syncer creates a host pod only once its virtual pod
	// is bound, naming the host node (spec.nodeName: the host's scheduler
	// is not asked). It needs sync.fromHost.nodes.enabled, and turns on
	// the "auto" storage kinds of sync.fromHost.
	Enabled bool `json:"enabled"`
}

// ControlPlaneProxy configures how clients reach the virtual API server.
type ControlPlaneProxy struct {
	// ExtraSANs are more host names and IP addresses the API server's
	// certificate covers, beyond the Service's names and cluster IP.
	ExtraSANs []string `json:"extraSANs"`

	// vCluster's address and port of its proxy: accepted, not acted on
	// (the API server listens where the chart's Service says).
	BindAddress any `json:"bindAddress,omitempty" config:"vcluster"`
	Port        any `json:"port,omitempty" config:"vcluster"`
}

// ControlPlaneStatefulSet configures the control plane's pod.
type ControlPlaneStatefulSet struct {
	// Image is clustersync's image, which holds the syncer, kube-apiserver
	// and kube-controller-manager.
	Image Image `json:"image"`
	// ImagePullPolicy is the containers' pull policy: "" (Kubernetes'
	// default), Always, IfNotPresent or Never.
	ImagePullPolicy string `json:"imagePullPolicy"`
	// Persistence configures where etcd's data lives.
	Persistence Persistence `json:"persistence"`
	// Resources are the syncer container's requests and limits.
	Resources Resources `json:"resources"`
	// HighAvailability is the number of control plane pods: one, until a
	// highly available control plane exists.
	HighAvailability HighAvailability `json:"highAvailability"`
	// Labels are labels of the StatefulSet besides clustersync's own (app,
	// release, app.kubernetes.io/name, …/instance, …/managed-by and
	// helm.sh/chart, which they cannot replace).
	Labels map[string]string `json:"labels"`
	// Annotations are annotations of the StatefulSet besides clustersync's
	// own (clustersync.io/persistence, which they cannot replace).
	Annotations map[string]string `json:"annotations"`
	// Pods are labels and annotations of the control plane pod.
	Pods PodMetadata `json:"pods"`
	// Scheduling places the control plane pod on the host's nodes.
	Scheduling Scheduling `json:"scheduling"`
	// DNSPolicy is the pod's DNS policy: "" (Kubernetes' default,
	// ClusterFirst), ClusterFirst, ClusterFirstWithHostNet, Default or None.
	DNSPolicy string `json:"dnsPolicy"`
	// DNSConfig is the pod's DNS configuration (nameservers, searches,
	// options); with dnsPolicy None it needs a nameserver.
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// RuntimeClassName is the pod's runtime class; "" for the node's
	// default.
	RuntimeClassName string `json:"runtimeClassName"`
	// HostAliases are entries the pod's /etc/hosts gets.
	HostAliases []corev1.HostAlias `json:"hostAliases"`

	// Security are the security contexts of the pod and of the control
	// plane's containers, each merged over clustersync's.
	Security ControlPlaneSecurity `json:"security"`
	// Probes time the kube-apiserver container's probes (vCluster's probe
	// the API server too, through its one container).
	Probes ControlPlaneProbes `json:"probes"`
	// Env are environment variables every control plane container gets,
	// after clustersync's own (POD_NAMESPACE, POD_IP), which they cannot
	// replace. vCluster runs its control plane as one container, so what
	// it gives that container (HTTPS_PROXY, say) reaches each of
	// clustersync's.
	Env []corev1.EnvVar `json:"env"`
	// WorkingDir is the working folder of every control plane container;
	// "" for the image's.
	WorkingDir string `json:"workingDir"`
	// EnableServiceLinks puts the namespace's Services into the pod's
	// environment. clustersync's default is false (the control plane
	// reads no such variables); vCluster's default, true, means
	// clustersync's (see VClusterDefaultMeansOurs).
	EnableServiceLinks bool `json:"enableServiceLinks"`
	// InitContainers run in the control plane pod after clustersync's own
	// init container (and once etcd, a sidecar, has started), before the
	// API server, the controller manager and the syncer, as vCluster runs
	// them after its own and before its control plane container.
	InitContainers []corev1.Container `json:"initContainers"`
	// SidecarContainers run in the control plane pod beside clustersync's
	// containers.
	SidecarContainers []corev1.Container `json:"sidecarContainers"`

	// The command and arguments of vCluster's own binary: accepted, not
	// acted on (clustersync's containers run clustersync).
	Args    any `json:"args,omitempty" config:"vcluster"`
	Command any `json:"command,omitempty" config:"vcluster"`
}

// ControlPlaneSecurity is vCluster's controlPlane.statefulSet.security.
type ControlPlaneSecurity struct {
	// PodSecurityContext is merged over the pod's security context, the
	// fields it sets winning; clustersync's is runAsUser, runAsGroup and
	// fsGroup 65532, runAsNonRoot and the RuntimeDefault seccomp profile.
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// ContainerSecurityContext is merged over the security context of
	// each of clustersync's containers, the fields it sets winning;
	// clustersync's allows no privilege escalation, mounts the root file
	// system read-only and drops every capability. vCluster's default
	// (root, no privilege escalation) means clustersync's.
	ContainerSecurityContext *corev1.SecurityContext `json:"containerSecurityContext,omitempty"`
}

// ControlPlaneProbes is vCluster's controlPlane.statefulSet.probes: the
// kube-apiserver container's probes (of /livez, /readyz and /readyz on
// its port 8443).
type ControlPlaneProbes struct {
	// LivenessProbe restarts the API server when it stops answering.
	LivenessProbe ProbeTiming `json:"livenessProbe"`
	// ReadinessProbe takes the control plane out of its Service while
	// the API server is not ready.
	ReadinessProbe ProbeTiming `json:"readinessProbe"`
	// StartupProbe holds the API server's liveness and readiness probes
	// until it first answers /readyz (the other containers start beside
	// it and wait for it themselves).
	StartupProbe ProbeTiming `json:"startupProbe"`
}

// ProbeTiming is one probe of vCluster's controlPlane.statefulSet.probes:
// whether it runs and how often; the fields as in a Kubernetes Probe.
type ProbeTiming struct {
	// Enabled runs the probe.
	Enabled bool `json:"enabled"`
	// FailureThreshold is how many failures in a row fail the probe.
	FailureThreshold int `json:"failureThreshold"`
	// InitialDelaySeconds is the wait before the first probe, in seconds.
	InitialDelaySeconds int `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds is how long one probe may take, in seconds.
	TimeoutSeconds int `json:"timeoutSeconds"`
	// PeriodSeconds is the time between two probes, in seconds.
	PeriodSeconds int `json:"periodSeconds"`
}

// PodMetadata is vCluster's controlPlane.statefulSet.pods: metadata of the
// control plane pod.
type PodMetadata struct {
	// Labels are labels of the pod besides the StatefulSet's selector (app
	// and release, which they cannot replace).
	Labels map[string]string `json:"labels"`
	// Annotations are annotations of the pod besides clustersync's own
	// (checksum/config, which they cannot replace).
	Annotations map[string]string `json:"annotations"`
}

// Scheduling is vCluster's controlPlane.statefulSet.scheduling: where
// the host schedules the control plane pod, as in a pod spec.
type Scheduling struct {
	// NodeSelector is the pod's node selector.
	NodeSelector map[string]string `json:"nodeSelector"`
	// Affinity is the pod's affinity.
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Tolerations are the pod's tolerations.
	Tolerations []corev1.Toleration `json:"tolerations"`
	// PriorityClassName is the pod's priority class; "" for none.
	PriorityClassName string `json:"priorityClassName"`
	// PodManagementPolicy is the StatefulSet's: Parallel or OrderedReady.
	PodManagementPolicy string `json:"podManagementPolicy"`
	// TopologySpreadConstraints are the pod's topology spread constraints.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
}

// HighAvailability is vCluster's controlPlane.statefulSet.highAvailability.
type HighAvailability struct {
	// Replicas is the number of control plane pods. clustersync runs one
	// and refuses any other number: more would be one in silence, as no
	// highly available control plane exists yet, and none is `virtual
	// pause`'s job.
	Replicas int `json:"replicas"`

	// vCluster's leader-election timings of its replicas: accepted, not
	// acted on (NoEffect lists what they set to other than vCluster's
	// defaults).
	LeaseDuration any `json:"leaseDuration,omitempty" config:"vcluster"`
	RenewDeadline any `json:"renewDeadline,omitempty" config:"vcluster"`
	RetryPeriod   any `json:"retryPeriod,omitempty" config:"vcluster"`
}

// Image names a container image as registry/repository:tag.
type Image struct {
	// Registry is the registry host, e.g. "ghcr.io".
	Registry string `json:"registry"`
	// Repository is the image's path within the registry.
	Repository string `json:"repository"`
	// Tag is the image tag; "" means the chart's appVersion.
	Tag string `json:"tag"`
}

// Persistence configures the control plane's data volume.
type Persistence struct {
	// VolumeClaim configures the PersistentVolumeClaim of etcd's data.
	VolumeClaim VolumeClaim `json:"volumeClaim"`

	// AddVolumes are more volumes of the control plane pod.
	AddVolumes []corev1.Volume `json:"addVolumes"`
	// AddVolumeMounts mount volumes into every control plane container
	// (vCluster mounts them into its one container).
	AddVolumeMounts []corev1.VolumeMount `json:"addVolumeMounts"`
	// DataVolume replaces the emptyDir of the data volume when no claim is
	// made: a list of one volume named "data" (vCluster's shape), e.g. a
	// hostPath or an existing claim. It needs volumeClaim.enabled false
	// or "auto" (a claim is then never made).
	DataVolume []corev1.Volume `json:"dataVolume"`

	// VolumeClaimTemplates are more claims of the StatefulSet, one per
	// pod, for addVolumeMounts to mount.
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates"`

	// BinariesVolume is where vCluster copies its distro's binaries:
	// accepted, not acted on (clustersync's image holds its own).
	BinariesVolume any `json:"binariesVolume,omitempty" config:"vcluster"`
}

// VolumeClaim configures the data volume claim of the control plane pod.
type VolumeClaim struct {
	// Enabled is true (always a claim), false (an emptyDir: the virtual
	// cluster's objects are lost with the pod) or "auto": a claim when the
	// host has a default StorageClass or StorageClass is set, else an
	// emptyDir.
	Enabled AutoSwitch `json:"enabled"`
	// Size is the claim's requested storage, e.g. "5Gi".
	Size resource.Quantity `json:"size"`
	// StorageClass is the claim's storageClassName; "" uses the host's
	// default class.
	StorageClass string `json:"storageClass"`
	// AccessModes are the claim's access modes.
	AccessModes []string `json:"accessModes"`
	// RetentionPolicy is what becomes of the claim when the StatefulSet
	// is deleted (its persistentVolumeClaimRetentionPolicy.whenDeleted):
	// Retain (vCluster's default: the claim, and the virtual cluster's
	// objects, stay for a cluster installed again under the name) or
	// Delete.
	RetentionPolicy string `json:"retentionPolicy"`
}

// BackingStore configures the storage of the virtual cluster's objects.
type BackingStore struct {
	// Database is vCluster's SQL backing store (embedded SQLite, external
	// via kine): accepted, not acted on; clustersync stores in etcd.
	Database any `json:"database,omitempty" config:"vcluster"`
	// Etcd configures etcd as the backing store.
	Etcd Etcd `json:"etcd"`
}

// Etcd chooses between an embedded and an external etcd; exactly one of
// them is enabled.
type Etcd struct {
	// Deploy is vCluster's etcd StatefulSet of its own: accepted, not
	// acted on.
	Deploy any `json:"deploy,omitempty" config:"vcluster"`
	// Embedded runs etcd inside the clustersync process.
	Embedded EtcdEmbedded `json:"embedded"`
	// External connects to an etcd that runs elsewhere.
	External EtcdExternal `json:"external"`
}

// EtcdEmbedded switches the embedded etcd.
type EtcdEmbedded struct {
	// Enabled defines if the embedded etcd is used.
	Enabled bool `json:"enabled"`

	// SnapshotCount is the number of committed transactions after which
	// etcd takes a snapshot (etcd's --snapshot-count); 0 keeps etcd's
	// default, 10000.
	SnapshotCount int `json:"snapshotCount,omitempty"`
	// ExtraArgs are flags of etcd (--name=value, as `etcd --help` lists
	// them) applied to the embedded etcd after clustersync's settings;
	// the flags clustersync sets (its data folder, addresses, certificates,
	// name, cluster and log) are refused, and so are the flags etcd reads
	// only on its command line (URL lists, the discovery and proxy ones).
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// The other keys of vCluster's embedded etcd: accepted, not acted on.
	MigrateFromDeployedEtcd any `json:"migrateFromDeployedEtcd,omitempty" config:"vcluster"`
	DefragTimeout           any `json:"defragTimeout,omitempty" config:"vcluster"`
}

// EtcdExternal configures the connection to an external etcd.
type EtcdExternal struct {
	// Enabled defines if the external etcd is used.
	Enabled bool `json:"enabled"`
	// Endpoint is the etcd client URL, e.g. "https://127.0.0.1:2379".
	Endpoint string `json:"endpoint"`
	// TLS configures the client TLS files.
	TLS EtcdExternalTLS `json:"tls"`
}

// EtcdExternalTLS names the files used to talk TLS to an external etcd.
type EtcdExternalTLS struct {
	// CAFile is the CA bundle that verifies the etcd server certificate.
	CAFile string `json:"caFile"`
	// CertFile is the client certificate.
	CertFile string `json:"certFile"`
	// KeyFile is the client certificate's private key.
	KeyFile string `json:"keyFile"`
}

// Syncer tunes clustersync's syncer. This section is clustersync's own.
type Syncer struct {
	// Workers is the number of reconcile workers per resource kind.
	Workers int `json:"workers"`
	// HostQPS is the sustained request rate (requests per second) of the
	// client talking to the host cluster.
	HostQPS float32 `json:"hostQPS"`
	// HostBurst is the burst size of the client talking to the host cluster.
	HostBurst int `json:"hostBurst"`
	// VirtualQPS is the sustained request rate (requests per second) of the
	// client talking to the virtual cluster.
	VirtualQPS float32 `json:"virtualQPS"`
	// VirtualBurst is the burst size of the client talking to the virtual
	// cluster.
	VirtualBurst int `json:"virtualBurst"`
}

// AutoSwitch is a switch that is on, off, or "auto" (decided by
// clustersync). In YAML it is written true, false or "auto". The zero value
// is AutoSwitchAuto.
type AutoSwitch int8

const (
	// AutoSwitchAuto leaves the decision to clustersync; written "auto".
	AutoSwitchAuto AutoSwitch = iota
	// AutoSwitchOn is on; written true.
	AutoSwitchOn
	// AutoSwitchOff is off; written false.
	AutoSwitchOff
)

// APIServerSANs are the names the API server's certificate covers besides
// the control plane's own (its Service's, the ingress host, the addresses
// it is exposed at): controlPlane.proxy.extraSANs, and
// kubernetes.default.svc.DOMAIN when networking.advanced.clusterDomain is
// not cluster.local (whose name the control plane covers anyway).
func (c *Config) APIServerSANs() []string {
	out := slices.Clone(c.ControlPlane.Proxy.ExtraSANs)
	if d := c.Networking.Advanced.ClusterDomain; d != "" && d != "cluster.local" {
		out = append(out, "kubernetes.default.svc."+d)
	}
	return out
}

// VirtualScheduler tells whether the control plane runs kube-scheduler:
// controlPlane.advanced.virtualScheduler.enabled or its other spelling,
// controlPlane.distro.k8s.scheduler.enabled, as in vCluster.
func (c *Config) VirtualScheduler() bool {
	return c.ControlPlane.Advanced.VirtualScheduler.Enabled || c.ControlPlane.Distro.K8S.Scheduler.Enabled
}

// SchedulerAuto resolves s, a sync.fromHost switch of a storage kind the
// scheduler reads (storageClasses, csiNodes, csiDrivers,
// csiStorageCapacities): "auto" is on with the virtual scheduler
// (controlPlane.advanced.virtualScheduler.enabled), as in vCluster.
func (c *Config) SchedulerAuto(s AutoSwitch) bool {
	return s.Resolve(c.VirtualScheduler())
}

// Resolve tells whether the switch is enabled, using auto as the answer
// when the switch is AutoSwitchAuto.
func (s AutoSwitch) Resolve(auto bool) bool {
	switch s {
	case AutoSwitchOn:
		return true
	case AutoSwitchOff:
		return false
	default:
		return auto
	}
}

// String returns the switch as written in YAML: "true", "false" or "auto".
func (s AutoSwitch) String() string {
	switch s {
	case AutoSwitchOn:
		return "true"
	case AutoSwitchOff:
		return "false"
	case AutoSwitchAuto:
		return "auto"
	default:
		return fmt.Sprintf("AutoSwitch(%d)", int8(s))
	}
}

// MarshalJSON writes the switch as true, false or "auto".
func (s AutoSwitch) MarshalJSON() ([]byte, error) {
	switch s {
	case AutoSwitchOn, AutoSwitchOff:
		return []byte(s.String()), nil
	case AutoSwitchAuto:
		return []byte(`"auto"`), nil
	default:
		return nil, fmt.Errorf("invalid %s", s)
	}
}

// UnmarshalJSON reads true, false or "auto"; null leaves the switch as is.
func (s *AutoSwitch) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	parsed, ok := parseAutoSwitch(v)
	if !ok {
		return fmt.Errorf("expected %s, got %s", autoSwitchWant, describeValue(v))
	}
	*s = parsed
	return nil
}

// autoSwitchWant is what an AutoSwitch accepts, for error messages.
const autoSwitchWant = `true, false or "auto"`

// parseAutoSwitch converts a decoded JSON value to an AutoSwitch.
func parseAutoSwitch(v any) (AutoSwitch, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return AutoSwitchOn, true
		}
		return AutoSwitchOff, true
	case string:
		if v == "auto" {
			return AutoSwitchAuto, true
		}
	}
	return AutoSwitchAuto, false
}

// ImageRef is an image reference, written as a string
// ("registry/repository:tag") or, as current vCluster writes it, as an
// object {registry, repository, tag}, which decodes to the same string
// (registry and tag optional).
type ImageRef string

// IsEnabled reports Enabled.
func (s EnableSwitch) IsEnabled() bool { return s.Enabled }

// IsEnabled reports Enabled.
func (s EnableSwitchWithTranslate) IsEnabled() bool { return s.Enabled }

// IsEnabled reports Enabled.
func (s ToHostCustomResource) IsEnabled() bool { return s.Enabled }

// IsEnabled reports Enabled.
func (s FromHostCustomResource) IsEnabled() bool { return s.Enabled }
