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
				Endpoints:              EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}},
				EndpointSlices:         EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}},
				NetworkPolicies:        EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				PersistentVolumeClaims: EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}},
				PersistentVolumes:      EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				VolumeSnapshots:        EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				StorageClasses:         EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				ServiceAccounts:        EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				PodDisruptionBudgets:   EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				PriorityClasses:        EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}},
				CustomResources:        map[string]ToHostCustomResource{},
			},
			FromHost: FromHost{
				Nodes: SyncNodes{
					Enabled:          false,
					SyncBackChanges:  false,
					ClearImageStatus: false,
					Selector:         NodeSelector{All: false, Labels: map[string]string{}},
				},
				Events:               FromHostSwitch{Enabled: true},
				IngressClasses:       FromHostSelectableSwitch{Enabled: false},
				RuntimeClasses:       FromHostSelectableSwitch{Enabled: false},
				PriorityClasses:      FromHostSelectableSwitch{Enabled: false},
				StorageClasses:       FromHostSelectableAutoSwitch{Enabled: AutoSwitchAuto},
				CSINodes:             FromHostAutoSwitch{Enabled: AutoSwitchAuto},
				CSIDrivers:           FromHostAutoSwitch{Enabled: AutoSwitchAuto},
				CSIStorageCapacities: FromHostAutoSwitch{Enabled: AutoSwitchAuto},
				CustomResources:      map[string]FromHostCustomResource{},
			},
		},
		ControlPlane: ControlPlane{
			BackingStore: BackingStore{
				Etcd: Etcd{
					Embedded: EtcdEmbedded{Enabled: true},
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
