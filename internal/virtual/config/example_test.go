package config_test

import (
	"fmt"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func ExampleParse() {
	cfg, err := config.Parse([]byte(`
sync:
  toHost:
    secrets:
      all: true
syncer:
  workers: 16
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Sync.ToHost.Secrets.All, cfg.Sync.ToHost.ConfigMaps.All, cfg.Syncer.Workers, cfg.Syncer.HostQPS)
	// Output: true false 16 1000
}

func ExampleParse_errors() {
	_, err := config.Parse([]byte(`
sync:
  toHost:
    podz: {}
    secrets:
      all: "yes"
    customResources:
      widgets.example.com:
        translate:
          - path: spec.owner
            reference: {kind: 7}
  fromHost:
    storageClasses:
      enabled: sometimes
syncer:
  workers: 0
  hostBurst: 1.5
`))
	fmt.Println(err)
	// Output:
	// sync.fromHost.storageClasses.enabled: expected true, false or "auto", got string "sometimes"
	// sync.toHost.customResources[widgets.example.com].translate[0].reference.kind: expected a string, got number 7
	// sync.toHost.podz: unknown key; did you mean pods? (known: configMaps, customResources, endpointSlices, endpoints, gatewayApi, ingresses, namespaces, networkPolicies, persistentVolumeClaims, persistentVolumes, podDisruptionBudgets, pods, priorityClasses, resourceClaimTemplates, resourceClaims, secrets, serviceAccounts, services, storageClasses, volumeSnapshotContents, volumeSnapshots)
	// sync.toHost.secrets.all: expected a boolean, got string "yes"
	// syncer.hostBurst: expected an integer, got number 1.5
	// syncer.workers: must be at least 1, got 0
}

func ExampleAutoSwitch_Resolve() {
	cfg := config.Default()
	virtualScheduler := true
	fmt.Println(cfg.Sync.FromHost.StorageClasses.Enabled, cfg.Sync.FromHost.StorageClasses.Enabled.Resolve(virtualScheduler))
	// Output: auto true
}
