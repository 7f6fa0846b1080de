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
// toleration it cannot parse) and features clustersync does not implement
// yet, so that a vCluster configuration is never silently half-applied.
// vCluster defaults that are on but have no effect here (endpointSlices: the
// host mirrors synced Endpoints into slices itself) are not errors;
// docs/configuration.md lists them.
func CheckConfig(cfg *config.Config) error {
	th, fh := cfg.Sync.ToHost, cfg.Sync.FromHost
	var errs []error
	bad := func(path string, on bool) {
		if on {
			errs = append(errs, fmt.Errorf("%s: not supported by clustersync yet", path))
		}
	}
	if _, err := pods.ParseTolerations(th.Pods.EnforceTolerations); err != nil {
		errs = append(errs, fmt.Errorf("sync.toHost.pods.enforceTolerations%w", err))
	}
	bad("sync.toHost.pods.patches (translate)", len(th.Pods.Translate) > 0)
	bad("sync.toHost.secrets.patches (translate)", len(th.Secrets.Translate) > 0)
	bad("sync.toHost.configMaps.patches (translate)", len(th.ConfigMaps.Translate) > 0)
	bad("sync.toHost.services.patches (translate)", len(th.Services.Translate) > 0)
	bad("sync.toHost.persistentVolumeClaims.patches (translate)", len(th.PersistentVolumeClaims.Translate) > 0)
	bad("sync.toHost.ingresses.patches (translate)", len(th.Ingresses.Translate) > 0)
	bad("sync.toHost.persistentVolumes.enabled", th.PersistentVolumes.Enabled)
	bad("sync.toHost.volumeSnapshots.enabled", th.VolumeSnapshots.Enabled)
	bad("sync.toHost.storageClasses.enabled", th.StorageClasses.Enabled)
	bad("sync.toHost.priorityClasses.enabled", th.PriorityClasses.Enabled)
	// "auto" means: with a virtual scheduler, which clustersync does not run.
	bad("sync.fromHost.storageClasses.enabled", fh.StorageClasses.Enabled.Resolve(false))
	bad("sync.fromHost.csiNodes.enabled", fh.CSINodes.Enabled.Resolve(false))
	bad("sync.fromHost.csiDrivers.enabled", fh.CSIDrivers.Enabled.Resolve(false))
	bad("sync.fromHost.csiStorageCapacities.enabled", fh.CSIStorageCapacities.Enabled.Resolve(false))
	for _, name := range slices.Sorted(maps.Keys(th.CustomResources)) {
		bad("sync.toHost.customResources["+name+"]", th.CustomResources[name].Enabled)
	}
	for _, name := range slices.Sorted(maps.Keys(fh.CustomResources)) {
		bad("sync.fromHost.customResources["+name+"]", fh.CustomResources[name].Enabled)
	}
	return errors.Join(errs...)
}
