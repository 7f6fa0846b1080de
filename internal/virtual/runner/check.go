package runner

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// CheckConfig returns one error per setting of cfg that the syncer cannot
// honour, naming the setting's path: values it cannot use (an enforced
// toleration it cannot parse) and the features of Unsupported, which
// clustersync does not implement yet, so that a vCluster configuration is
// never silently half-applied. The errors are joined with errors.Join, in
// the order of Unsupported; it returns nil when there are none. The keys
// that are accepted and have no effect here (Ignored: endpointSlices, the
// real nodes' options) are not errors.
func CheckConfig(cfg *config.Config) error {
	var errs []error
	if _, err := pods.ParseTolerations(cfg.Sync.ToHost.Pods.EnforceTolerations); err != nil {
		errs = append(errs, fmt.Errorf("sync.toHost.pods.enforceTolerations%w", err))
	}
	for _, k := range Unsupported() {
		if !k.On(cfg) {
			continue
		}
		names, isMap := enabledEntries(cfg, k.Path)
		if !isMap {
			errs = append(errs, notSupported(k.Path))
		}
		for _, name := range names {
			errs = append(errs, notSupported(k.Path+"["+name+"]"))
		}
	}
	return errors.Join(errs...)
}

// notSupported is CheckConfig's error for the setting at path.
func notSupported(path string) error {
	return fmt.Errorf("%s: not supported by clustersync yet", path)
}

// UnsupportedKey is a setting of the configuration file that clustersync
// does not implement yet: CheckConfig refuses a file in which it is on.
type UnsupportedKey struct {
	// Path is the setting's dotted path as CheckConfig's error names it,
	// e.g. "sync.toHost.persistentVolumes.enabled"; a list that vCluster
	// also spells `patches` is written "….patches (translate)". For a map
	// of kinds ("sync.toHost.customResources") the error names each entry
	// that is on: "sync.toHost.customResources[widgets.example.com]".
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
	return []UnsupportedKey{
		{"sync.toHost.pods.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.Pods.Translate) > 0 }},
		{"sync.toHost.secrets.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.Secrets.Translate) > 0 }},
		{"sync.toHost.configMaps.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.ConfigMaps.Translate) > 0 }},
		{"sync.toHost.services.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.Services.Translate) > 0 }},
		{"sync.toHost.persistentVolumeClaims.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.PersistentVolumeClaims.Translate) > 0 }},
		{"sync.toHost.ingresses.patches (translate)", func(c *config.Config) bool { return len(c.Sync.ToHost.Ingresses.Translate) > 0 }},
		{"sync.toHost.persistentVolumes.enabled", func(c *config.Config) bool { return c.Sync.ToHost.PersistentVolumes.Enabled }},
		{"sync.toHost.volumeSnapshots.enabled", func(c *config.Config) bool { return c.Sync.ToHost.VolumeSnapshots.Enabled }},
		{"sync.toHost.storageClasses.enabled", func(c *config.Config) bool { return c.Sync.ToHost.StorageClasses.Enabled }},
		{"sync.toHost.priorityClasses.enabled", func(c *config.Config) bool { return c.Sync.ToHost.PriorityClasses.Enabled }},
		{"sync.fromHost.nodes.enabled", func(c *config.Config) bool { return c.Sync.FromHost.Nodes.Enabled }},
		// "auto" means: with a virtual scheduler, which clustersync does not run.
		{"sync.fromHost.storageClasses.enabled", func(c *config.Config) bool { return c.Sync.FromHost.StorageClasses.Enabled.Resolve(false) }},
		{"sync.fromHost.csiNodes.enabled", func(c *config.Config) bool { return c.Sync.FromHost.CSINodes.Enabled.Resolve(false) }},
		{"sync.fromHost.csiDrivers.enabled", func(c *config.Config) bool { return c.Sync.FromHost.CSIDrivers.Enabled.Resolve(false) }},
		{"sync.fromHost.csiStorageCapacities.enabled", func(c *config.Config) bool { return c.Sync.FromHost.CSIStorageCapacities.Enabled.Resolve(false) }},
		{"sync.toHost.customResources", func(c *config.Config) bool { return len(enabledToHostResources(c)) > 0 }},
		{"sync.fromHost.customResources", func(c *config.Config) bool { return len(enabledFromHostResources(c)) > 0 }},
	}
}

// enabledEntries returns, for the path of a map of kinds, the sorted names
// of its entries that are on in cfg, and isMap true; for any other path it
// returns nil, false.
func enabledEntries(cfg *config.Config, path string) (names []string, isMap bool) {
	switch path {
	case "sync.toHost.customResources":
		return enabledToHostResources(cfg), true
	case "sync.fromHost.customResources":
		return enabledFromHostResources(cfg), true
	}
	return nil, false
}

// enabledToHostResources returns the sorted names of the enabled entries
// of sync.toHost.customResources.
func enabledToHostResources(cfg *config.Config) []string {
	return enabledNames(cfg.Sync.ToHost.CustomResources, func(e config.EnableSwitchWithTranslate) bool { return e.Enabled })
}

// enabledFromHostResources returns the sorted names of the enabled entries
// of sync.fromHost.customResources.
func enabledFromHostResources(cfg *config.Config) []string {
	return enabledNames(cfg.Sync.FromHost.CustomResources, func(e config.EnableSwitch) bool { return e.Enabled })
}

// enabledNames returns the sorted keys of m whose entry is on.
func enabledNames[E any](m map[string]E, on func(E) bool) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if on(m[name]) {
			out = append(out, name)
		}
	}
	return out
}

// Ignored returns the dotted paths of the keys of the configuration file
// that CheckConfig accepts and the syncer does not act on: vCluster
// settings that are on by default there, or that only apply to real nodes,
// which clustersync does not sync. Each call returns a new slice. The
// generated key table of docs/configuration.md marks these keys "accepted,
// no effect", as it marks the vCluster sections kept as written
// (config.Config.NoEffect).
func Ignored() []string {
	return []string{
		// The host's own controllers make EndpointSlices from the synced
		// Endpoints and pods.
		"sync.toHost.endpointSlices.enabled",
		// Real nodes only (sync.fromHost.nodes.enabled is Unsupported).
		"sync.fromHost.nodes.syncBackChanges",
		"sync.fromHost.nodes.clearImageStatus",
		"sync.fromHost.nodes.selector.all",
		"sync.fromHost.nodes.selector.labels",
	}
}
