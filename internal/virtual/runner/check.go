package runner

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/dns"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/resources"
	"github.com/clustersync/clustersync/internal/virtual/resources/customresources"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/resources/gatewayapi"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// CheckConfig returns one error per setting of cfg that the syncer cannot
// honour, naming the setting's path: values it cannot use (an enforced
// toleration it cannot parse, a patch whose path or expression does not
// compile, a customResources key that is not <plural>.<group> or a scope
// the direction cannot take) and the
// features of Unsupported, which clustersync does not implement yet, so
// that a vCluster configuration is never silently half-applied. The errors
// are joined with errors.Join; it returns nil when there are none. The
// keys that are accepted and have no effect here (Ignored) are not errors.
func CheckConfig(cfg *config.Config) error {
	var errs []error
	k8s := cfg.ControlPlane.Distro.K8S
	for _, c := range []struct {
		name string
		args []string
	}{{"apiServer", k8s.APIServer.ExtraArgs}, {"controllerManager", k8s.ControllerManager.ExtraArgs}, {"scheduler", k8s.Scheduler.ExtraArgs}} {
		for _, p := range controlplane.CheckExtraArgs(c.name, c.args) {
			errs = append(errs, fmt.Errorf("controlPlane.distro.k8s.%s.extraArgs%s", c.name, p))
		}
	}
	if embedded := cfg.ControlPlane.BackingStore.Etcd.Embedded; !cfg.ControlPlane.BackingStore.Etcd.External.Enabled {
		if embedded.SnapshotCount < 0 {
			errs = append(errs, fmt.Errorf("controlPlane.backingStore.etcd.embedded.snapshotCount: %d is negative", embedded.SnapshotCount))
		}
		for _, p := range controlplane.CheckEtcdArgs(embedded.ExtraArgs) {
			errs = append(errs, fmt.Errorf("controlPlane.backingStore.etcd.embedded.extraArgs%s", p))
		}
	}
	if text := cfg.ControlPlane.CoreDNS.OverwriteConfig; text != "" {
		if _, err := dns.UserCorefile(text, dns.Options{Kubeconfig: "/data/kubeconfig.yaml"}); err != nil {
			errs = append(errs, err)
		}
	}
	th, fh := cfg.Sync.ToHost, cfg.Sync.FromHost
	if _, err := pods.ParseTolerations(th.Pods.EnforceTolerations); err != nil {
		errs = append(errs, fmt.Errorf("sync.toHost.pods.enforceTolerations%w", err))
	}
	for _, k := range resources.Kinds() {
		if _, err := k.CompilePatches(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(th.CustomResources)) {
		key := "sync.toHost.customResources[" + name + "]"
		if _, err := customresources.ParseName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		if _, err := patches.Compile(key+".patches", th.CustomResources[name].Translate, patches.DefaultLimits()); err != nil {
			errs = append(errs, err)
		}
		switch sc := th.CustomResources[name].Scope; sc {
		case "", "Namespaced":
		case "Cluster":
			errs = append(errs, fmt.Errorf("%s.scope: Cluster: only namespaced kinds are synced to the host (their objects need a host namespace)", key))
		default:
			errs = append(errs, fmt.Errorf("%s.scope: must be Namespaced, got %q", key, sc))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fh.CustomResources)) {
		key := "sync.fromHost.customResources[" + name + "]"
		if _, err := customresources.ParseName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		entry := fh.CustomResources[name]
		switch entry.Scope {
		case "", "Cluster", "Namespaced":
		default:
			errs = append(errs, fmt.Errorf("%s.scope: must be Cluster or Namespaced, got %q", key, entry.Scope))
		}
		if len(entry.Mappings.ByName) > 0 || entry.Scope == "Namespaced" {
			// The virtual cluster's host namespace is not known here: any
			// valid name stands for it.
			if _, err := fromhost.ParseMappings(entry.Mappings.ByName, "host-namespace"); err != nil {
				errs = append(errs, fmt.Errorf("%s.%w", key, err))
			}
		}
	}
	for _, m := range []struct {
		key string
		m   config.FromHostMapped
	}{{"configMaps", fh.ConfigMaps}, {"secrets", fh.Secrets}} {
		if m.m.Enabled {
			if _, err := fromhost.ParseMappings(m.m.Mappings.ByName, "host-namespace"); err != nil {
				errs = append(errs, fmt.Errorf("sync.fromHost.%s.%w", m.key, err))
			}
		}
	}
	for _, s := range []struct {
		key string
		sel *metav1.LabelSelector
	}{{"ingressClasses", fh.IngressClasses.Selector}, {"runtimeClasses", fh.RuntimeClasses.Selector},
		{"priorityClasses", fh.PriorityClasses.Selector}, {"storageClasses", fh.StorageClasses.Selector},
		{"gatewayClasses", fh.GatewayClasses.Selector}, {"gateways", fh.Gateways.Selector}} {
		if _, err := resources.FromHostSelector(s.key, s.sel); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.Networking.Advanced.ProxyKubelets.ByIP && !th.Services.Enabled {
		errs = append(errs, fmt.Errorf("networking.advanced.proxyKubelets.byIP: needs sync.toHost.services.enabled: true (the syncer writes a host Service per node)"))
	}
	if err := gatewayapi.ValidateFromHostGateways(fh.Gateways); err != nil {
		errs = append(errs, err)
	}
	for _, k := range Unsupported() {
		if !k.On(cfg) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: not supported by clustersync yet", k.Path))
	}
	return errors.Join(errs...)
}

// UnsupportedKey is a setting of the configuration file that clustersync
// does not implement yet: CheckConfig refuses a file in which it is on.
type UnsupportedKey struct {
	// Path is the setting's dotted path as CheckConfig's error names it,
	// e.g. "sync.toHost.persistentVolumes.enabled".
	Path string
	// On tells whether the setting is on in cfg, i.e. whether CheckConfig
	// refuses cfg because of it.
	On func(cfg *config.Config) bool
}

// Unsupported returns the settings clustersync does not implement yet, one
// per key, in the order CheckConfig reports them; each call returns a new
// slice. Implementing a feature means deleting its row; the generated key
// table of docs/configuration.md marks these keys "not yet".
func Unsupported() []UnsupportedKey {
	return []UnsupportedKey{}
}

// Ignored returns the dotted paths of the keys of the configuration file
// that CheckConfig accepts and the syncer does not act on: none today
// (the last ones, the policies, are implemented). Each call returns a new
// slice. The generated key table of docs/configuration.md marks these
// keys "accepted, no effect", as it marks the vCluster sections kept as
// written (config.Config.NoEffect).
func Ignored() []string {
	return []string{}
}
