package config

import "k8s.io/apimachinery/pkg/api/resource"

// Default returns a new Config holding every default: vCluster's defaults
// for `sync:` and `controlPlane:` (embedded etcd), and clustersync's own for
// `syncer:`. Maps and lists are empty but never nil. Each call returns a
// fresh value that the caller may modify.
func Default() *Config {
	return &Config{
		Sync: Sync{
			ToHost: ToHost{
				Pods: SyncPods{
					Enabled:               true,
					TranslateImage:        map[string]string{},
					EnforceTolerations:    []string{},
					UseSecretsForSATokens: false,
					RewriteHosts: RewriteHosts{
						Enabled: true,
						InitContainer: RewriteHostsInitContainer{
							Image: "library/alpine:3.20",
							Resources: Resources{
								Limits:   defaultInitContainerResources(),
								Requests: defaultInitContainerResources(),
							},
						},
					},
					Translate: []Patch{},
				},
				Secrets:                SelectiveSync{Enabled: true, All: false, Translate: []Patch{}},
				ConfigMaps:             SelectiveSync{Enabled: true, All: false, Translate: []Patch{}},
				Ingresses:              EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				Services:               EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}},
				Endpoints:              EnableSwitch{Enabled: true},
				EndpointSlices:         EnableSwitch{Enabled: true},
				NetworkPolicies:        EnableSwitch{Enabled: false},
				PersistentVolumeClaims: EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}},
				PersistentVolumes:      EnableSwitch{Enabled: false},
				VolumeSnapshots:        EnableSwitch{Enabled: false},
				StorageClasses:         EnableSwitch{Enabled: false},
				ServiceAccounts:        EnableSwitch{Enabled: false},
				PodDisruptionBudgets:   EnableSwitch{Enabled: false},
				PriorityClasses:        EnableSwitch{Enabled: false},
				CustomResources:        map[string]EnableSwitchWithTranslate{},
			},
			FromHost: FromHost{
				Nodes: SyncNodes{
					Enabled:          false,
					SyncBackChanges:  false,
					ClearImageStatus: false,
					Selector:         NodeSelector{All: false, Labels: map[string]string{}},
				},
				Events:               EnableSwitch{Enabled: true},
				IngressClasses:       EnableSwitch{Enabled: false},
				RuntimeClasses:       EnableSwitch{Enabled: false},
				PriorityClasses:      EnableSwitch{Enabled: false},
				StorageClasses:       EnableAutoSwitch{Enabled: AutoSwitchAuto},
				CSINodes:             EnableAutoSwitch{Enabled: AutoSwitchAuto},
				CSIDrivers:           EnableAutoSwitch{Enabled: AutoSwitchAuto},
				CSIStorageCapacities: EnableAutoSwitch{Enabled: AutoSwitchAuto},
				CustomResources:      map[string]EnableSwitch{},
			},
		},
		ControlPlane: ControlPlane{
			BackingStore: BackingStore{
				Etcd: Etcd{
					Embedded: EnableSwitch{Enabled: true},
					External: EtcdExternal{Enabled: false},
				},
			},
			StatefulSet: ControlPlaneStatefulSet{
				Image: Image{Registry: "ghcr.io", Repository: "clustersync/clustersync", Tag: ""},
				Persistence: Persistence{VolumeClaim: VolumeClaim{
					Enabled:      AutoSwitchAuto,
					Size:         resource.MustParse("5Gi"),
					StorageClass: "",
					AccessModes:  []string{"ReadWriteOnce"},
				}},
				Resources: Resources{
					Limits:   map[string]resource.Quantity{"memory": resource.MustParse("2Gi")},
					Requests: map[string]resource.Quantity{"cpu": resource.MustParse("200m"), "memory": resource.MustParse("256Mi")},
				},
			},
			Proxy: ControlPlaneProxy{ExtraSANs: []string{}},
		},
		Syncer: Syncer{
			Workers:      10,
			HostQPS:      1000,
			HostBurst:    2000,
			VirtualQPS:   1000,
			VirtualBurst: 2000,
		},
	}
}

// defaultInitContainerResources returns vCluster's limits and requests of
// the /etc/hosts rewrite init container: cpu 30m, memory 64Mi.
func defaultInitContainerResources() map[string]resource.Quantity {
	return map[string]resource.Quantity{
		"cpu":    resource.MustParse("30m"),
		"memory": resource.MustParse("64Mi"),
	}
}
