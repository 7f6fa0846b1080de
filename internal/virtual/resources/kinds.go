// Package resources is the table of the kinds the syncer handles: one row
// per kind, read by the runner (which controllers run), by Cleanup (the
// host copies of a kind switched off) and by the chart's generated RBAC
// (charts/virtual-cluster/templates/_kinds_rbac.tpl, `go generate`). Each
// kind lives in its own folder below this one, as vCluster's
// pkg/controllers/resources/<kind>/: syncer.go (the controller),
// translate.go (pure, table-tested) and their tests. Adding a kind touches
// its folder and one row of Kinds.
package resources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/resources/configmaps"
	"github.com/clustersync/clustersync/internal/virtual/resources/customresources"
	"github.com/clustersync/clustersync/internal/virtual/resources/endpoints"
	"github.com/clustersync/clustersync/internal/virtual/resources/endpointslices"
	"github.com/clustersync/clustersync/internal/virtual/resources/events"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/resources/gatewayapi"
	"github.com/clustersync/clustersync/internal/virtual/resources/ingresses"
	"github.com/clustersync/clustersync/internal/virtual/resources/networkpolicies"
	"github.com/clustersync/clustersync/internal/virtual/resources/nodes"
	"github.com/clustersync/clustersync/internal/virtual/resources/pdbs"
	"github.com/clustersync/clustersync/internal/virtual/resources/persistentvolumes"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/resources/priorityclasses"
	"github.com/clustersync/clustersync/internal/virtual/resources/pvcs"
	"github.com/clustersync/clustersync/internal/virtual/resources/secrets"
	"github.com/clustersync/clustersync/internal/virtual/resources/serviceaccounts"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	"github.com/clustersync/clustersync/internal/virtual/resources/storageclasses"
	"github.com/clustersync/clustersync/internal/virtual/resources/volumesnapshots"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

//go:generate go run ./gen -chart ../../../charts/virtual-cluster/templates/_kinds_rbac.tpl

// Env is what a kind's controllers are built from.
type Env struct {
	// Manager runs the controllers (the virtual cluster's manager); Host
	// is the host cluster's cache and client.
	Manager ctrl.Manager
	Host    cluster.Cluster
	// Syncer is the shared syncer context; Config the virtual cluster's
	// configuration.
	Syncer *syncer.Context
	Config *config.Config
	// DNS, when set, is the pod serving the virtual cluster's DNS
	// (services.HostSpec).
	DNS *services.DNSBackend
	// HostServiceAccount is the host ServiceAccount the host pods run as.
	HostServiceAccount string
	// ClusterDomain is the virtual cluster's DNS domain, e.g. cluster.local.
	ClusterDomain string
}

// Kind is one row of the table.
type Kind struct {
	// Name names the kind in messages, e.g. "pods".
	Name string
	// Switch is the configuration key (vcluster.yaml and chart values,
	// dotted) that turns it on; Enabled must follow it. "" for a kind
	// without one.
	Switch string
	// AutoSwitch is set when Switch takes true, false or "auto"
	// (config.AutoSwitch) and "auto" means "with the virtual scheduler"
	// (controlPlane.advanced.virtualScheduler.enabled), as in vCluster.
	// The chart then grants the kind's rules for true, and for "auto"
	// with the virtual scheduler (a string "auto" is true to Helm's `if`).
	AutoSwitch bool
	// AlsoSwitches are further boolean keys any one of which turns the kind
	// on too (vCluster's umbrella sync.toHost.gatewayApi.enabled); Enabled
	// follows them, and the chart grants the kind's rules under any of them.
	AlsoSwitches []string
	// Enabled reports whether cfg runs the kind.
	Enabled func(cfg *config.Config) bool
	// CRDs are the CustomResourceDefinitions of the host that the kind
	// copies into the virtual cluster at start (the chart grants get on
	// them); `virtual create` and `upgrade` refuse a configuration that
	// turns the kind on when the host does not serve them
	// (deploy.CheckHostKinds), and the start fails naming Switch.
	CRDs []string
	// CRDFix says how to give the host the CRDs, for the errors.
	CRDFix string
	// Bundled, when set, returns the CRD of that name (one of CRDs) that
	// the virtual cluster gets when the host does not serve it (ok false:
	// the host must): a kind the syncer only reads in the virtual cluster.
	Bundled func(name string) (crd *apiextensionsv1.CustomResourceDefinition, ok bool, err error)
	// HostKinds are the kinds of the host objects it creates in the host
	// namespace (copies labelled vcluster.loft.sh/managed-by): while on it
	// needs every verb on them, off it keeps list and delete, with which
	// Cleanup deletes the copies; `virtual delete` deletes them too.
	HostKinds []schema.GroupVersionKind
	// ClusterScoped is set when the HostKinds are cluster-scoped: their
	// rules go to the chart's ClusterRole, and Cleanup and `virtual delete`
	// find the copies by their vcluster.loft.sh/object-host-namespace.
	ClusterScoped bool
	// ReadRules are further rights it needs in the host namespace while on
	// (what it only reads).
	ReadRules []rbacv1.PolicyRule
	// ClusterRules are the cluster-scoped rights it needs while on.
	ClusterRules []rbacv1.PolicyRule
	// OptionClusterRules are cluster-scoped rights it needs only while on
	// and while a further setting is on too.
	OptionClusterRules []OptionRules
	// Register adds its controllers to env.Manager.
	Register func(ctx context.Context, env Env) error
	// Patches, when set, returns the kind's patches
	// (<Switch without .enabled>.patches, also spelled translate), which
	// the engine applies to the host objects of HostKinds[0].
	Patches func(cfg *config.Config) []config.Patch
	// Referrers, when set, lists what the kind's virtual objects use among
	// the objects synced only when used (referrer → used objects); the
	// runner records it before the controllers start, so that no Secret
	// or ConfigMap looks unused after a restart.
	Referrers func(ctx context.Context, virtual client.Reader) (map[mapping.Ref][]mapping.Ref, error)
}

// OptionRules are rights a kind needs only while one of its boolean
// settings is on, e.g. writing host nodes with
// sync.fromHost.nodes.syncBackChanges.
type OptionRules struct {
	// Key is the setting's configuration key (vcluster.yaml and chart
	// values, dotted); On must follow it.
	Key string
	// On reports whether cfg turns the setting on.
	On func(cfg *config.Config) bool
	// Rules are the rights it needs.
	Rules []rbacv1.PolicyRule
}

func coreRule(verbs []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: resources, Verbs: verbs}
}

func core(kind string) []schema.GroupVersionKind {
	return []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind(kind)}
}

// Kinds returns the table, in the order the runner registers the kinds.
func Kinds() []Kind {
	toHost := func(cfg *config.Config) config.ToHost { return cfg.Sync.ToHost }
	return []Kind{
		{
			Name: "pods", Switch: "sync.toHost.pods.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).Pods.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).Pods.Enabled },
			HostKinds: core("Pod"),
			// Ephemeral containers (kubectl debug) and in-place resizes
			// reach the host pod through its ephemeralcontainers and
			// resize subresources only.
			ReadRules: []rbacv1.PolicyRule{coreRule([]string{"get", "update", "patch"}, "pods/ephemeralcontainers", "pods/resize")},
			Referrers: referrers(func() client.ObjectList { return &corev1.PodList{} }, func(o client.Object) (mapping.Ref, []mapping.Ref) {
				p := o.(*corev1.Pod)
				return mapping.Ref{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, pods.References(p)
			}),
			Register: registerPods,
		},
		{
			// The fake nodes that stand for the host nodes of the tenant's
			// pods (vCluster's default: sync.fromHost.nodes.enabled false).
			Name: "fake nodes",
			Enabled: func(cfg *config.Config) bool {
				return toHost(cfg).Pods.Enabled && !cfg.Sync.FromHost.Nodes.Enabled
			},
			ClusterRules:       []rbacv1.PolicyRule{coreRule([]string{"get", "list", "watch"}, "nodes")},
			OptionClusterRules: proxyKubeletsRules(),
			Register: func(ctx context.Context, env Env) error {
				return nodes.Register(ctx, env.Manager, env.Host, env.Syncer)
			},
		},
		{
			// Copies of the host's nodes (sync.fromHost.nodes.enabled); the
			// host nodes are written only to sync labels and taints back.
			Name: "real nodes", Switch: "sync.fromHost.nodes.enabled",
			Enabled:      func(cfg *config.Config) bool { return cfg.Sync.FromHost.Nodes.Enabled },
			ClusterRules: []rbacv1.PolicyRule{coreRule([]string{"get", "list", "watch"}, "nodes")},
			OptionClusterRules: append(proxyKubeletsRules(), OptionRules{
				Key:   "sync.fromHost.nodes.syncBackChanges",
				On:    func(cfg *config.Config) bool { return cfg.Sync.FromHost.Nodes.SyncBackChanges },
				Rules: []rbacv1.PolicyRule{coreRule([]string{"patch"}, "nodes")},
			}, OptionRules{
				// The virtual scheduler's copies leave out what every
				// other host pod on the node requests.
				Key:   virtualSchedulerKey,
				On:    func(cfg *config.Config) bool { return cfg.VirtualScheduler() },
				Rules: []rbacv1.PolicyRule{coreRule([]string{"get", "list", "watch"}, "pods")},
			}),
			Register: registerRealNodes,
		},
		{
			Name: "services", Switch: "sync.toHost.services.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).Services.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).Services.Enabled },
			HostKinds: core("Service"),
			Register: func(_ context.Context, env Env) error {
				r := services.New(env.Syncer.Translator, env.DNS)
				r.StripExternalIPs = env.Config.Policies.Isolation.ExternalIPs
				return syncer.Register(env.Manager, env.Host, env.Syncer, r, env.Config.Syncer.Workers)
			},
		},
		{
			Name: "endpoints", Switch: "sync.toHost.endpoints.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).Endpoints.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).Endpoints.Enabled },
			HostKinds: core("Endpoints"),
			Register: func(_ context.Context, env Env) error {
				r := endpoints.New(env.Syncer.Translator)
				r.RestrictAddresses = env.Config.Policies.Isolation.Endpoints
				return syncer.Register(env.Manager, env.Host, env.Syncer, r, env.Config.Syncer.Workers)
			},
		},
		{
			// Only the slices the tenant writes itself; Kubernetes'
			// controllers make the others on both sides.
			Name: "endpointSlices", Switch: "sync.toHost.endpointSlices.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).EndpointSlices.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).EndpointSlices.Enabled },
			HostKinds: []schema.GroupVersionKind{discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")},
			Register: func(_ context.Context, env Env) error {
				r := endpointslices.New(env.Syncer.Translator)
				r.RestrictAddresses = env.Config.Policies.Isolation.Endpoints
				return syncer.Register(env.Manager, env.Host, env.Syncer, r, env.Config.Syncer.Workers)
			},
		},
		{
			Name: "ingresses", Switch: "sync.toHost.ingresses.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).Ingresses.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).Ingresses.Enabled },
			HostKinds: []schema.GroupVersionKind{networkingv1.SchemeGroupVersion.WithKind("Ingress")},
			Register:  registerResource(ingresses.New),
			Referrers: referrers(func() client.ObjectList { return &networkingv1.IngressList{} }, func(o client.Object) (mapping.Ref, []mapping.Ref) {
				return ingresses.Ref(o.(*networkingv1.Ingress)), ingresses.References(o.(*networkingv1.Ingress))
			}),
		},
		{
			Name: "serviceAccounts", Switch: "sync.toHost.serviceAccounts.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).ServiceAccounts.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).ServiceAccounts.Enabled },
			HostKinds: core("ServiceAccount"),
			Register:  registerResource(serviceaccounts.New),
			Referrers: referrers(func() client.ObjectList { return &corev1.ServiceAccountList{} }, func(o client.Object) (mapping.Ref, []mapping.Ref) {
				return serviceaccounts.Ref(o.(*corev1.ServiceAccount)), serviceaccounts.References(o.(*corev1.ServiceAccount))
			}),
		},
		{
			Name: "networkPolicies", Switch: "sync.toHost.networkPolicies.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).NetworkPolicies.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).NetworkPolicies.Enabled },
			HostKinds: []schema.GroupVersionKind{networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy")},
			Register:  registerResource(networkpolicies.New),
		},
		{
			Name: "podDisruptionBudgets", Switch: "sync.toHost.podDisruptionBudgets.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).PodDisruptionBudgets.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).PodDisruptionBudgets.Enabled },
			HostKinds: []schema.GroupVersionKind{policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")},
			Register:  registerResource(pdbs.New),
		},
		{
			// Cluster-scoped: host copies vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER.
			Name: "priorityClasses", Switch: "sync.toHost.priorityClasses.enabled", ClusterScoped: true,
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).PriorityClasses.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).PriorityClasses.Enabled },
			HostKinds: []schema.GroupVersionKind{schedulingv1.SchemeGroupVersion.WithKind("PriorityClass")},
			Register:  registerResource(priorityclasses.New),
		},
		{
			Name: "persistentVolumeClaims", Switch: "sync.toHost.persistentVolumeClaims.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).PersistentVolumeClaims.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).PersistentVolumeClaims.Enabled },
			HostKinds: core("PersistentVolumeClaim"),
			Register: func(_ context.Context, env Env) error {
				th := toHost(env.Config)
				return syncer.Register(env.Manager, env.Host, env.Syncer, pvcs.New(env.Syncer.Translator, th.StorageClasses.Enabled, th.PersistentVolumes.Enabled), env.Config.Syncer.Workers)
			},
		},
		{
			// Stand-in virtual volumes for the claims the host binds to
			// volumes the tenant did not make; virtual cluster only.
			Name:    "fake persistentVolumes",
			Enabled: func(cfg *config.Config) bool { return toHost(cfg).PersistentVolumeClaims.Enabled },
			Register: func(ctx context.Context, env Env) error {
				return persistentvolumes.RegisterFake(ctx, env.Manager, env.Syncer)
			},
		},
		{
			// Cluster-scoped: host copies vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER.
			Name: "persistentVolumes", Switch: "sync.toHost.persistentVolumes.enabled", ClusterScoped: true,
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).PersistentVolumes.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).PersistentVolumes.Enabled },
			HostKinds: core("PersistentVolume"),
			Register: func(_ context.Context, env Env) error {
				on := toHost(env.Config).StorageClasses.Enabled
				r := persistentvolumes.New(env.Syncer.Translator, func(ctx context.Context, s *syncer.Context, name string) string {
					return storageclasses.HostClassOf(ctx, s, on, name)
				})
				r.RefuseNodeFiles = env.Config.Policies.PodSecurityStandard != config.PodSecurityPrivileged
				return syncer.Register(env.Manager, env.Host, env.Syncer, r, env.Config.Syncer.Workers)
			},
		},
		{
			// Cluster-scoped; the default-class annotation stays virtual.
			Name: "storageClasses", Switch: "sync.toHost.storageClasses.enabled", ClusterScoped: true,
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).StorageClasses.Enabled },
			HostKinds: []schema.GroupVersionKind{storagev1.SchemeGroupVersion.WithKind("StorageClass")},
			// The user's patches, then the built-in one (storageclasses.BuiltinPatches).
			Patches: func(cfg *config.Config) []config.Patch {
				return append(slices.Clone(toHost(cfg).StorageClasses.Translate), storageclasses.BuiltinPatches()...)
			},
			Register: registerResource(storageclasses.New),
		},
		{
			// The host's snapshot CRDs are copied into the virtual cluster,
			// its VolumeSnapshotClasses shown read-only.
			Name: "volumeSnapshots", Switch: "sync.toHost.volumeSnapshots.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).VolumeSnapshots.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).VolumeSnapshots.Enabled },
			HostKinds: []schema.GroupVersionKind{snapshotv1.SchemeGroupVersion.WithKind("VolumeSnapshot")},
			ClusterRules: []rbacv1.PolicyRule{
				{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: volumesnapshots.CRDs(), Verbs: []string{"get"}},
				{APIGroups: []string{snapshotv1.GroupName}, Resources: []string{"volumesnapshotclasses"}, Verbs: []string{"get", "list", "watch"}},
			},
			Register: registerVolumeSnapshots,
		},
		{
			// The tenant's pre-provisioned contents; cluster-scoped.
			Name: "volumeSnapshotContents", Switch: "sync.toHost.volumeSnapshots.enabled", ClusterScoped: true,
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).VolumeSnapshots.Enabled },
			HostKinds: []schema.GroupVersionKind{snapshotv1.SchemeGroupVersion.WithKind("VolumeSnapshotContent")},
			Register:  registerResource(volumesnapshots.NewContents),
		},
		{
			Name: "configMaps", Switch: "sync.toHost.configMaps.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).ConfigMaps.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).ConfigMaps.Enabled },
			HostKinds: core("ConfigMap"),
			Register: func(_ context.Context, env Env) error {
				return syncer.Register(env.Manager, env.Host, env.Syncer, configmaps.New(env.Syncer.Translator, toHost(env.Config).ConfigMaps), env.Config.Syncer.Workers)
			},
		},
		{
			Name: "secrets", Switch: "sync.toHost.secrets.enabled",
			Patches:   func(cfg *config.Config) []config.Patch { return toHost(cfg).Secrets.Translate },
			Enabled:   func(cfg *config.Config) bool { return toHost(cfg).Secrets.Enabled },
			HostKinds: core("Secret"),
			Register: func(_ context.Context, env Env) error {
				return syncer.Register(env.Manager, env.Host, env.Syncer, secrets.New(env.Syncer.Translator, toHost(env.Config).Secrets), env.Config.Syncer.Workers)
			},
		},
		fromHostKind("ingressClasses", func(cfg *config.Config) bool { return cfg.Sync.FromHost.IngressClasses.Enabled },
			func(f config.FromHost) *metav1.LabelSelector { return f.IngressClasses.Selector },
			schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}),
		fromHostKind("runtimeClasses", func(cfg *config.Config) bool { return cfg.Sync.FromHost.RuntimeClasses.Enabled },
			func(f config.FromHost) *metav1.LabelSelector { return f.RuntimeClasses.Selector },
			schema.GroupVersionKind{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}),
		fromHostKind("priorityClasses", func(cfg *config.Config) bool { return cfg.Sync.FromHost.PriorityClasses.Enabled },
			func(f config.FromHost) *metav1.LabelSelector { return f.PriorityClasses.Selector },
			schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}),
		// The storage kinds the virtual scheduler reads; "auto" follows it.
		fromHostAutoKind("storageClasses", func(f config.FromHost) config.AutoSwitch { return f.StorageClasses.Enabled },
			func(f config.FromHost) *metav1.LabelSelector { return f.StorageClasses.Selector },
			storagev1.SchemeGroupVersion.WithKind("StorageClass")),
		fromHostAutoKind("csiNodes", func(f config.FromHost) config.AutoSwitch { return f.CSINodes.Enabled }, nil,
			storagev1.SchemeGroupVersion.WithKind("CSINode")),
		fromHostAutoKind("csiDrivers", func(f config.FromHost) config.AutoSwitch { return f.CSIDrivers.Enabled }, nil,
			storagev1.SchemeGroupVersion.WithKind("CSIDriver")),
		// Host ConfigMaps and Secrets that mappings.byName names, in any
		// host namespace (the chart gives the syncer a Role in each).
		fromHostMappedKind("configMaps", func(f config.FromHost) config.FromHostMapped { return f.ConfigMaps }, "ConfigMap",
			func(h types.NamespacedName) bool { return h.Name == "kube-root-ca.crt" }),
		fromHostMappedKind("secrets", func(f config.FromHost) config.FromHostMapped { return f.Secrets }, "Secret", nil),
		{
			// CSI drivers publish capacities in their own namespaces: every
			// host namespace is read, the copies go to kube-system.
			Name: "fromHost csiStorageCapacities", Switch: "sync.fromHost.csiStorageCapacities.enabled", AutoSwitch: true,
			Enabled: func(cfg *config.Config) bool {
				return cfg.SchedulerAuto(cfg.Sync.FromHost.CSIStorageCapacities.Enabled)
			},
			ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{storagev1.GroupName}, Resources: []string{"csistoragecapacities"},
				Verbs: []string{"get", "list", "watch"}}},
			Register: registerCSIStorageCapacities,
		},
		// The Gateway API (gateway.networking.k8s.io/v1): the tenant's
		// objects to the host, the host's classes and chosen Gateways shown
		// read-only (internal/virtual/resources/gatewayapi).
		withReferrers(gatewayKind("gateways", "Gateway", func(g config.GatewayAPI) config.EnableSwitchWithTranslate { return g.Gateways }, true,
			func(tr translate.Translator, imp *gatewayapi.Imports) syncer.Resource[*gatewayv1.Gateway] {
				return gatewayapi.NewGateways(tr, imp)
			}, "gatewayclasses", "referencegrants"),
			referrers(func() client.ObjectList { return &gatewayv1.GatewayList{} }, func(o client.Object) (mapping.Ref, []mapping.Ref) {
				return mapping.Ref{Kind: gatewayapi.KindGateway, Namespace: o.GetNamespace(), Name: o.GetName()}, gatewayapi.GatewayReferences(o.(*gatewayv1.Gateway))
			})),
		gatewayKind("httpRoutes", "HTTPRoute", func(g config.GatewayAPI) config.EnableSwitchWithTranslate { return g.HTTPRoutes }, true,
			func(tr translate.Translator, imp *gatewayapi.Imports) syncer.Resource[*gatewayv1.HTTPRoute] {
				return gatewayapi.NewHTTPRoutes(tr, imp)
			}, "gateways", "referencegrants"),
		gatewayKind("tlsRoutes", "TLSRoute", func(g config.GatewayAPI) config.EnableSwitchWithTranslate { return g.TLSRoutes }, false,
			func(tr translate.Translator, imp *gatewayapi.Imports) syncer.Resource[*gatewayv1.TLSRoute] {
				return gatewayapi.NewTLSRoutes(tr, imp)
			}, "gateways", "referencegrants"),
		withReferrers(gatewayKind("backendTLSPolicies", "BackendTLSPolicy", func(g config.GatewayAPI) config.EnableSwitchWithTranslate { return g.BackendTLSPolicies }, false,
			func(tr translate.Translator, imp *gatewayapi.Imports) syncer.Resource[*gatewayv1.BackendTLSPolicy] {
				return gatewayapi.NewBackendTLSPolicies(tr, imp)
			}),
			referrers(func() client.ObjectList { return &gatewayv1.BackendTLSPolicyList{} }, func(o client.Object) (mapping.Ref, []mapping.Ref) {
				return mapping.Ref{Kind: gatewayapi.KindBackendTLSPolicy, Namespace: o.GetNamespace(), Name: o.GetName()},
					gatewayapi.BackendTLSPolicyReferences(o.(*gatewayv1.BackendTLSPolicy))
			})),
		{
			// Same name, read-only, spec.parametersRef hidden.
			Name: "fromHost gatewayClasses", Switch: "sync.fromHost.gatewayClasses.enabled",
			AlsoSwitches: []string{"sync.fromHost.gateways.enabled", "sync.toHost.gatewayApi.enabled"},
			Enabled: func(cfg *config.Config) bool {
				return cfg.Sync.FromHost.GatewayClasses.Enabled || cfg.Sync.FromHost.Gateways.Enabled || cfg.Sync.ToHost.GatewayAPI.Enabled
			},
			CRDs: gatewayCRDs("gatewayclasses"), CRDFix: gatewayCRDFix,
			ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{gatewayapi.Group}, Resources: []string{"gatewayclasses"}, Verbs: []string{"get", "list", "watch"}}},
			Register: func(ctx context.Context, env Env) error {
				sel, err := FromHostSelector("gatewayClasses", env.Config.Sync.FromHost.GatewayClasses.Selector)
				if err != nil {
					return err
				}
				return fromhost.Register(env.Manager, env.Host, env.Syncer, "gatewayClasses", gatewayv1.SchemeGroupVersion.WithKind("GatewayClass"),
					fromhost.Options{Key: "sync.fromHost.gatewayClasses", Selector: sel, Transform: gatewayapi.ClassTransform})
			},
		},
		{
			// The host Gateways mappings.byName names, read through a host
			// cache of their namespaces (the chart gives the syncer a Role in
			// each, templates/role.yaml).
			Name: "fromHost gateways", Switch: "sync.fromHost.gateways.enabled",
			Enabled: func(cfg *config.Config) bool { return cfg.Sync.FromHost.Gateways.Enabled },
			CRDs:    gatewayCRDs("gateways"), CRDFix: gatewayCRDFix,
			ReadRules: []rbacv1.PolicyRule{{APIGroups: []string{gatewayapi.Group}, Resources: []string{"gateways"}, Verbs: []string{"get", "list", "watch"}}},
			Register:  registerImportedGateways,
		},
		{
			// Any CRD's objects, one controller per enabled entry; the chart's
			// rules for them are generated from the entries (ChartRBAC).
			Name: "customResources",
			Enabled: func(cfg *config.Config) bool {
				return len(customresources.Enabled(toHost(cfg).CustomResources)) > 0
			},
			Register: registerCustomResources,
		},
		{
			Name: "fromHost customResources",
			Enabled: func(cfg *config.Config) bool {
				return len(customresources.Enabled(cfg.Sync.FromHost.CustomResources)) > 0
			},
			Register: registerFromHostCustomResources,
		},
		{
			// networking.replicateServices: Services published across; the
			// chart gives the syncer a Role in each host namespace named
			// (templates/role.yaml).
			Name: "replicateServices",
			Enabled: func(cfg *config.Config) bool {
				rs := cfg.Networking.ReplicateServices
				return len(rs.ToHost)+len(rs.FromHost) > 0
			},
			Register: registerReplicateServices,
		},
		{
			Name: "events", Switch: "sync.fromHost.events.enabled",
			Enabled:   func(cfg *config.Config) bool { return cfg.Sync.FromHost.Events.Enabled },
			ReadRules: []rbacv1.PolicyRule{coreRule([]string{"get", "list", "watch"}, "events")},
			Register: func(_ context.Context, env Env) error {
				return events.Register(env.Manager, env.Host, env.Syncer)
			},
		},
	}
}

// proxyKubeletsRules are the node rows' rights with either
// networking.advanced.proxyKubelets key: the tenant's node exporters read
// the host kubelets through the host API server (kubeletproxy.Tenant).
func proxyKubeletsRules() []OptionRules {
	var out []OptionRules
	for _, key := range []string{"byHostname", "byIP"} {
		out = append(out, OptionRules{
			Key: "networking.advanced.proxyKubelets." + key,
			On: func(cfg *config.Config) bool {
				pk := cfg.Networking.Advanced.ProxyKubelets
				return map[string]bool{"byHostname": pk.ByHostname, "byIP": pk.ByIP}[key]
			},
			Rules: []rbacv1.PolicyRule{coreRule([]string{"get"}, "nodes/proxy")},
		})
	}
	return out
}

// withReferrers is k with Referrers r.
func withReferrers(k Kind, r func(context.Context, client.Reader) (map[mapping.Ref][]mapping.Ref, error)) Kind {
	k.Referrers = r
	return k
}

// gatewayCRDFix is the CRDFix of the Gateway API kinds.
const gatewayCRDFix = "install the Gateway API's CRDs on the host (kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.3/standard-install.yaml), or switch the key off"

// gatewayCRDs are the names of the Gateway API CRDs of plurals.
func gatewayCRDs(plurals ...string) []string {
	out := make([]string, len(plurals))
	for i, p := range plurals {
		out[i] = p + "." + gatewayapi.Group
	}
	return out
}

// gatewayKind is the row of a Gateway API kind synced to the host,
// sync.toHost.gatewayApi.<key> (of picks its switch), also on with the
// umbrella sync.toHost.gatewayApi.enabled when umbrella is set; extra are
// the further CRDs (plurals) its syncer reads in the virtual cluster.
func gatewayKind[T client.Object](key, kind string, of func(config.GatewayAPI) config.EnableSwitchWithTranslate, umbrella bool,
	newResource func(translate.Translator, *gatewayapi.Imports) syncer.Resource[T], extra ...string) Kind {
	gvk := gatewayv1.SchemeGroupVersion.WithKind(kind)
	gvr := ResourceOf(gvk)
	k := Kind{
		Name: key, Switch: "sync.toHost.gatewayApi." + key + ".enabled",
		Enabled: func(cfg *config.Config) bool {
			g := cfg.Sync.ToHost.GatewayAPI
			return of(g).Enabled || umbrella && g.Enabled
		},
		Patches:   func(cfg *config.Config) []config.Patch { return of(cfg.Sync.ToHost.GatewayAPI).Translate },
		HostKinds: []schema.GroupVersionKind{gvk},
		CRDs:      gatewayCRDs(append([]string{gvr.Resource}, extra...)...), CRDFix: gatewayCRDFix, Bundled: gatewayapi.BundledCRD,
		Register: func(_ context.Context, env Env) error {
			imp, err := importsOf(env)
			if err != nil {
				return err
			}
			return syncer.Register[T](env.Manager, env.Host, env.Syncer, newResource(env.Syncer.Translator, imp), env.Config.Syncer.Workers)
		},
	}
	if umbrella {
		k.AlsoSwitches = []string{"sync.toHost.gatewayApi.enabled"}
	}
	return k
}

// importsOf are the copies of host Gateways of env's configuration (nil
// without sync.fromHost.gateways).
func importsOf(env Env) (*gatewayapi.Imports, error) {
	g := env.Config.Sync.FromHost.Gateways
	if !g.Enabled {
		return nil, nil
	}
	m, err := fromhost.ParseMappings(g.Mappings.ByName, env.Syncer.Translator.HostNamespace)
	if err != nil {
		return nil, fmt.Errorf("sync.fromHost.gateways.%w", err)
	}
	return &gatewayapi.Imports{Mappings: m, Config: g}, nil
}

// registerImportedGateways keeps read-only copies of the host Gateways
// sync.fromHost.gateways.mappings names (gatewayapi.ImportedGateway),
// read through a host cache of the mapped namespaces: one a mapping
// names exactly always, one of a namespace/* mapping when the selector
// (if any) matches.
func registerImportedGateways(_ context.Context, env Env) error {
	const key = "sync.fromHost.gateways"
	g := env.Config.Sync.FromHost.Gateways
	if err := gatewayapi.ValidateFromHostGateways(g); err != nil {
		return err
	}
	imp, err := importsOf(env)
	if err != nil {
		return err
	}
	sel, err := FromHostSelector("gateways", g.Selector)
	if err != nil {
		return err
	}
	namespaces := map[string]cache.Config{}
	for _, ns := range imp.Mappings.HostNamespaces() {
		namespaces[ns] = cache.Config{}
	}
	hostCache, err := hostCacheOf(env, cache.Options{DefaultNamespaces: namespaces})
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	filter := func(h *unstructured.Unstructured) bool {
		return imp.Mappings.Named(client.ObjectKeyFromObject(h)) || sel == nil || sel.Matches(labels.Set(h.GetLabels()))
	}
	return fromhost.RegisterMapped(env.Manager, hostCache, env.Syncer, "gateways", gatewayv1.SchemeGroupVersion.WithKind("Gateway"), imp.Mappings,
		fromhost.Options{Key: key, Filter: filter, Transform: gatewayapi.ImportTransform(g), Status: true})
}

// CopyCRDs copies the kind's CRDs from the host into the virtual cluster
// (customresources.CopyDefinition), or installs a Bundled one the host
// does not serve, skipping those done names and adding the ones it
// copies (several kinds read the same CRDs); the error names the kind's
// Switch and CRDFix.
func (k Kind) CopyCRDs(ctx context.Context, env Env, done map[string]bool) error {
	for _, name := range k.CRDs {
		if done[name] {
			continue
		}
		done[name] = true
		if crd, ok, err := k.bundled(name); err != nil {
			return err
		} else if ok {
			var h apiextensionsv1.CustomResourceDefinition
			err := env.Host.GetAPIReader().Get(ctx, client.ObjectKey{Name: name}, &h)
			if apierrors.IsNotFound(err) {
				crd.Labels = map[string]string{fromhost.Label: "true"}
				if err := customresources.InstallDefinition(ctx, env.Manager.GetAPIReader(), env.Manager.GetClient(), crd); err != nil {
					return fmt.Errorf("%s: %w", k.SwitchKeys(), err)
				}
				continue
			} else if err != nil {
				return fmt.Errorf("%s: read the host's CustomResourceDefinition %s: %w", k.SwitchKeys(), name, err)
			}
		}
		if _, err := copyCRD(ctx, env, name); err != nil {
			return fmt.Errorf("%s: %w; %s", k.SwitchKeys(), err, k.CRDFix)
		}
	}
	return nil
}

// SwitchKeys names the keys that turn the kind on, for messages: Switch,
// or "Switch or AlsoSwitches[0] or …".
func (k Kind) SwitchKeys() string {
	return strings.Join(append([]string{k.Switch}, k.AlsoSwitches...), " or ")
}

// CompilePatches compiles the kind's patches from cfg (nil when it has
// none); errors name each patch's key, e.g.
// sync.toHost.pods.patches[0].expression.
func (k Kind) CompilePatches(cfg *config.Config) (*patches.Set, error) {
	if k.Patches == nil {
		return nil, nil
	}
	return patches.Compile(strings.TrimSuffix(k.Switch, ".enabled")+".patches", k.Patches(cfg), patches.DefaultLimits())
}

// registerResource is the Register of a kind synced by the engine
// (syncer.Register) whose syncer needs only the virtual cluster's names.
func registerResource[T client.Object, R syncer.Resource[T]](newResource func(translate.Translator) R) func(context.Context, Env) error {
	return func(_ context.Context, env Env) error {
		return syncer.Register[T](env.Manager, env.Host, env.Syncer, newResource(env.Syncer.Translator), env.Config.Syncer.Workers)
	}
}

// referrers is a Kind.Referrers that lists the virtual objects of newList
// and names each one's references with refs. A kind the virtual cluster
// does not serve yet (its CRD is copied when its controller starts) has
// no objects.
func referrers(newList func() client.ObjectList, refs func(client.Object) (mapping.Ref, []mapping.Ref)) func(context.Context, client.Reader) (map[mapping.Ref][]mapping.Ref, error) {
	return func(ctx context.Context, virtual client.Reader) (map[mapping.Ref][]mapping.Ref, error) {
		list := newList()
		if err := virtual.List(ctx, list); meta.IsNoMatchError(err) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		out := make(map[mapping.Ref][]mapping.Ref, len(objs))
		for _, o := range objs {
			from, to := refs(o.(client.Object))
			out[from] = to
		}
		return out, nil
	}
}

// fromHostKind is the row of a cluster-scoped kind copied read-only from
// the host (sync.fromHost.<key>.enabled; internal/virtual/resources/fromhost),
// on when enabled says so, copying the host objects selector picks (nil:
// the key has no selector).
func fromHostKind(key string, enabled func(*config.Config) bool, selector func(config.FromHost) *metav1.LabelSelector, gvk schema.GroupVersionKind) Kind {
	gvr := ResourceOf(gvk)
	return Kind{
		Name: "fromHost " + key, Switch: "sync.fromHost." + key + ".enabled",
		Enabled:      enabled,
		ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{gvk.Group}, Resources: []string{gvr.Resource}, Verbs: []string{"get", "list", "watch"}}},
		Register: func(_ context.Context, env Env) error {
			o := fromhost.Options{Key: "sync.fromHost." + key}
			if selector != nil {
				sel, err := FromHostSelector(key, selector(env.Config.Sync.FromHost))
				if err != nil {
					return err
				}
				o.Selector = sel
			}
			return fromhost.Register(env.Manager, env.Host, env.Syncer, key, gvk, o)
		},
	}
}

// FromHostSelector is the label selector of sync.fromHost.<key>.selector
// (nil or empty: every object); its error names the key.
func FromHostSelector(key string, sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil {
		return nil, nil
	}
	out, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("sync.fromHost.%s.selector: %w", key, err)
	}
	return out, nil
}

// fromHostAutoKind is fromHostKind for a key that takes true, false or
// "auto" (AutoSwitch): "auto" follows the virtual scheduler
// (config.Config.SchedulerAuto).
func fromHostAutoKind(key string, on func(config.FromHost) config.AutoSwitch, selector func(config.FromHost) *metav1.LabelSelector, gvk schema.GroupVersionKind) Kind {
	k := fromHostKind(key, func(cfg *config.Config) bool { return cfg.SchedulerAuto(on(cfg.Sync.FromHost)) }, selector, gvk)
	k.AutoSwitch = true
	return k
}

// fromHostMappedKind is the row of a namespaced core kind (e.g.
// "ConfigMap") whose host objects sync.fromHost.<key>.mappings names are
// copied read-only, through a host cache of the mapped namespaces; skip
// names host objects never copied (nil: none). Its host-namespace rules
// cover the "" and "/name" entries; the chart gives the syncer a Role in
// each other mapped namespace (templates/role.yaml).
func fromHostMappedKind(key string, of func(config.FromHost) config.FromHostMapped, kind string, skip func(types.NamespacedName) bool) Kind {
	gvk := corev1.SchemeGroupVersion.WithKind(kind)
	gvr := ResourceOf(gvk)
	return Kind{
		Name: "fromHost " + key, Switch: "sync.fromHost." + key + ".enabled",
		Enabled:   func(cfg *config.Config) bool { return of(cfg.Sync.FromHost).Enabled },
		ReadRules: []rbacv1.PolicyRule{coreRule([]string{"get", "list", "watch"}, gvr.Resource)},
		Register: func(_ context.Context, env Env) error {
			prefix := "sync.fromHost." + key
			m, err := fromhost.ParseMappings(of(env.Config.Sync.FromHost).Mappings.ByName, env.Syncer.Translator.HostNamespace)
			if err != nil {
				return fmt.Errorf("%s.%w", prefix, err)
			}
			namespaces := map[string]cache.Config{}
			for _, ns := range m.HostNamespaces() {
				namespaces[ns] = cache.Config{}
			}
			hostCache, err := hostCacheOf(env, cache.Options{DefaultNamespaces: namespaces})
			if err != nil {
				return fmt.Errorf("%s: %w", prefix, err)
			}
			return fromhost.RegisterMapped(env.Manager, hostCache, env.Syncer, key, gvk, m, fromhost.Options{Key: prefix, Skip: skip})
		},
	}
}

// registerCustomResources copies the CRD of every enabled
// sync.toHost.customResources entry from the host and syncs its objects
// through the engine with the entry's patches. A cluster-scoped kind is
// refused: its objects have no host namespace to go to.
func registerCustomResources(ctx context.Context, env Env) error {
	entries := env.Config.Sync.ToHost.CustomResources
	var errs []error
	for _, name := range customresources.Enabled(entries) {
		key := "sync.toHost.customResources[" + name + "]"
		def, err := copyCRD(ctx, env, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
			continue
		}
		if !def.Namespaced {
			errs = append(errs, fmt.Errorf("%s: %s is cluster-scoped; only namespaced kinds are synced to the host", key, def.GVK.Kind))
			continue
		}
		set, err := patches.Compile(key+".patches", entries[name].Translate, patches.DefaultLimits())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		env.Syncer.SetPatches(def.GVK, set)
		if err := syncer.Register(env.Manager, env.Host, env.Syncer, customresources.New(env.Syncer.Translator, name, def), env.Config.Syncer.Workers); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// registerFromHostCustomResources copies the CRD of every enabled
// sync.fromHost.customResources entry from the host and keeps read-only
// copies of its objects: a cluster-scoped kind's under their own names; a
// namespaced kind's as its mappings.byName say, read through a cache of
// their own that watches the host namespaces the mappings name.
func registerFromHostCustomResources(ctx context.Context, env Env) error {
	entries := env.Config.Sync.FromHost.CustomResources
	var errs []error
	for _, name := range customresources.Enabled(entries) {
		key := "sync.fromHost.customResources[" + name + "]"
		def, err := copyCRD(ctx, env, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
			continue
		}
		if !def.Namespaced {
			if err := fromhost.Register(env.Manager, env.Host, env.Syncer, name, def.GVK, fromhost.Options{Key: key}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
			}
			continue
		}
		m, err := fromhost.ParseMappings(entries[name].Mappings.ByName, env.Syncer.Translator.HostNamespace)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s is namespaced: %w", key, def.GVK.Kind, err))
			continue
		}
		namespaces := map[string]cache.Config{}
		for _, ns := range m.HostNamespaces() {
			namespaces[ns] = cache.Config{}
		}
		hostCache, err := hostCacheOf(env, cache.Options{DefaultNamespaces: namespaces})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
			continue
		}
		if err := fromhost.RegisterMapped(env.Manager, hostCache, env.Syncer, name, def.GVK, m, fromhost.Options{Key: key}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// copyCRD copies the host's CustomResourceDefinition name into the virtual
// cluster (customresources.CopyDefinition), reading both sides live.
func copyCRD(ctx context.Context, env Env, name string) (customresources.Definition, error) {
	return customresources.CopyDefinition(ctx, env.Host.GetAPIReader(), env.Manager.GetAPIReader(), env.Manager.GetClient(), name)
}

// hostCacheOf is a host cache of its own, run by env.Manager, for the
// controllers that read host namespaces beyond the shared cache's one:
// o's namespaces (none: all of them) and per-object settings; the host's
// scheme and REST mapper are filled in.
func hostCacheOf(env Env, o cache.Options) (cache.Cache, error) {
	o.Scheme, o.Mapper = env.Host.GetScheme(), env.Host.GetRESTMapper()
	c, err := cache.New(env.Host.GetConfig(), o)
	if err != nil {
		return nil, err
	}
	return c, env.Manager.Add(c)
}

// registerReplicateServices runs networking.replicateServices through a
// host cache of the host namespaces its entries name.
func registerReplicateServices(_ context.Context, env Env) error {
	o := services.ReplicationOptionsOf(env.Config, env.Syncer.Translator.VCluster)
	namespaces := map[string]cache.Config{}
	for _, e := range o.ToHost {
		namespaces[e.To.Namespace] = cache.Config{}
	}
	for _, e := range o.FromHost {
		namespaces[e.From.Namespace] = cache.Config{}
	}
	hostCache, err := hostCacheOf(env, cache.Options{DefaultNamespaces: namespaces})
	if err != nil {
		return fmt.Errorf("networking.replicateServices: %w", err)
	}
	return services.RegisterReplication(env.Manager, hostCache, env.Host.GetClient(), env.Syncer, o)
}

// registerCSIStorageCapacities keeps read-only copies of the host's
// CSIStorageCapacities of every host namespace in the virtual namespace
// kube-system (NAME-x-HOSTNAMESPACE), read through a cache of their own.
func registerCSIStorageCapacities(_ context.Context, env Env) error {
	hostCache, err := hostCacheOf(env, cache.Options{})
	if err != nil {
		return err
	}
	return fromhost.RegisterMapped(env.Manager, hostCache, env.Syncer, "csiStorageCapacities",
		storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"), fromhost.NewIntoNamespace(metav1.NamespaceSystem),
		fromhost.Options{Key: "sync.fromHost.csiStorageCapacities"})
}

// registerVolumeSnapshots copies the host's snapshot CRDs into the virtual
// cluster and registers the VolumeSnapshot syncer, the stand-in contents
// and the read-only VolumeSnapshotClasses. A host without the CRDs stops
// the start with an error saying so.
func registerVolumeSnapshots(ctx context.Context, env Env) error {
	for _, name := range volumesnapshots.CRDs() {
		if _, err := copyCRD(ctx, env, name); err != nil {
			return fmt.Errorf("sync.toHost.volumeSnapshots: %w (install the CRDs of https://github.com/kubernetes-csi/external-snapshotter on the host)", err)
		}
	}
	if err := registerResource(volumesnapshots.NewSnapshots)(ctx, env); err != nil {
		return err
	}
	if err := volumesnapshots.RegisterStandIns(env.Manager, env.Host, env.Syncer); err != nil {
		return err
	}
	return fromhost.Register(env.Manager, env.Host, env.Syncer, "volumeSnapshotClasses", snapshotv1.SchemeGroupVersion.WithKind("VolumeSnapshotClass"),
		fromhost.Options{Key: "sync.toHost.volumeSnapshots"})
}

// registerRealNodes registers the copies of the host's nodes; with the
// virtual scheduler, with a cache of every host pod of their own
// (nodes.HostPodTransform keeps little of each).
func registerRealNodes(ctx context.Context, env Env) error {
	var hostPods cache.Cache
	if env.Config.VirtualScheduler() {
		c, err := hostCacheOf(env, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: nodes.HostPodTransform}}})
		if err != nil {
			return err
		}
		hostPods = c
	}
	return nodes.RegisterReal(ctx, env.Manager, env.Host, env.Syncer, env.Config.Sync.FromHost.Nodes, hostPods)
}

// registerPods builds the pod syncer from sync.toHost.pods.
func registerPods(_ context.Context, env Env) error {
	p := env.Config.Sync.ToHost.Pods
	tolerations, err := pods.ParseTolerations(p.EnforceTolerations)
	if err != nil {
		return fmt.Errorf("sync.toHost.pods.enforceTolerations: %w", err)
	}
	pe := pods.Environment{
		Translator: env.Syncer.Translator, HostServiceAccount: env.HostServiceAccount, ClusterDomain: env.ClusterDomain,
		TranslateImage: p.TranslateImage, EnforceTolerations: tolerations,
		SyncServiceAccounts: env.Config.Sync.ToHost.ServiceAccounts.Enabled, UseSecretsForSATokens: p.UseSecretsForSATokens,
		SyncPriorityClasses: env.Config.Sync.ToHost.PriorityClasses.Enabled,
		EnforceNodeSelector: env.Config.Sync.FromHost.Nodes.Selector.Labels,
		RealNodes:           env.Config.Sync.FromHost.Nodes.Enabled,
		RestrictNodeName:    env.Config.Policies.Isolation.NodeName,
		RestrictTolerations: env.Config.Policies.Isolation.Tolerations,
		VirtualScheduler:    env.Config.VirtualScheduler(),
	}
	if level := env.Config.Policies.PodSecurityStandard; level != config.PodSecurityPrivileged {
		ps, err := policy.NewPodSecurity(level)
		if err != nil {
			return fmt.Errorf("policies.podSecurityStandard: %w", err)
		}
		pe.PodSecurity = ps
	}
	if rh := p.RewriteHosts; rh.Enabled {
		pe.RewriteHosts = &pods.RewriteHosts{Image: env.Config.RewriteHostsImage(), Resources: corev1.ResourceRequirements{
			Limits: resourceList(rh.InitContainer.Resources.Limits), Requests: resourceList(rh.InitContainer.Resources.Requests),
		}}
	}
	return syncer.Register(env.Manager, env.Host, env.Syncer, pods.New(pe), env.Config.Syncer.Workers)
}

func resourceList(m map[string]resource.Quantity) corev1.ResourceList {
	out := make(corev1.ResourceList, len(m))
	for k, v := range m {
		out[corev1.ResourceName(k)] = v
	}
	return out
}

// bundled is k.Bundled(name), false without Bundled.
func (k Kind) bundled(name string) (*apiextensionsv1.CustomResourceDefinition, bool, error) {
	if k.Bundled == nil {
		return nil, false, nil
	}
	return k.Bundled(name)
}

// HostCRDs are the kind's CRDs the host must serve while it is on: CRDs
// but the Bundled ones.
func (k Kind) HostCRDs() []string {
	var out []string
	for _, name := range k.CRDs {
		if _, ok, _ := k.bundled(name); !ok {
			out = append(out, name)
		}
	}
	return out
}
