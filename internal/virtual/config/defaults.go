package config

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultRewriteHostsImage is the default image of the rewrite-hosts init
// container (sync.toHost.pods.rewriteHosts.initContainer.image): Debian's
// busybox-static, which has the sh and sed the container runs, built by
// clustersync (internal/images.Busybox) and pushed by `clustersync dev up`
// and `make image`. vCluster's default, library/alpine:3.20, cannot be
// pulled by a host without access to Docker Hub, such as the local host.
const DefaultRewriteHostsImage = "ghcr.io/clustersync/busybox:1.35.0"

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
					UseSecretsForSATokens: true, // vCluster: false (docs/security.md)
					RewriteHosts: RewriteHosts{
						Enabled: true,
						InitContainer: RewriteHostsInitContainer{
							Image: DefaultRewriteHostsImage,
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
				GatewayAPI: GatewayAPI{
					HTTPRoutes:         EnableSwitchWithTranslate{Translate: []Patch{}},
					Gateways:           EnableSwitchWithTranslate{Translate: []Patch{}},
					TLSRoutes:          EnableSwitchWithTranslate{Translate: []Patch{}},
					BackendTLSPolicies: EnableSwitchWithTranslate{Translate: []Patch{}},
					ReferenceGrants:    ReferenceGrantsSwitch{Enabled: AutoSwitchAuto},
				},
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
				ConfigMaps:           FromHostMapped{Mappings: FromHostMappings{ByName: map[string]string{}}},
				Secrets:              FromHostMapped{Mappings: FromHostMappings{ByName: map[string]string{}}},
				CustomResources:      map[string]FromHostCustomResource{},
				GatewayClasses:       FromHostSelectableSwitch{Enabled: false},
				Gateways: FromHostGateways{
					Mappings:      FromHostMappings{ByName: map[string]string{}},
					AllowedRoutes: GatewayAllowedRoutes{Overrides: []GatewayAllowedRoutesOverride{}},
					Sanitize:      GatewayImportSanitize{CertificateRefs: true, Infrastructure: true},
				},
			},
		},
		Networking: Networking{Advanced: NetworkingAdvanced{ClusterDomain: "cluster.local"},
			ReplicateServices: ReplicateServices{ToHost: []ServiceMapping{}, FromHost: []ServiceMapping{}}},
		Experimental: Experimental{Deploy: ExperimentalDeploy{VCluster: DeployVCluster{Helm: []DeployHelm{}}}},
		Integrations: Integrations{MetricsServer: MetricsServer{Enabled: true, Nodes: true, Pods: true}},
		ControlPlane: ControlPlane{
			BackingStore: BackingStore{
				Etcd: Etcd{
					Embedded: EtcdEmbedded{Enabled: true},
					External: EtcdExternal{Enabled: false},
				},
			},
			StatefulSet: ControlPlaneStatefulSet{
				Image: Image{Registry: "ghcr.io", Repository: "clustersync/clustersync", Tag: ""},
				Persistence: Persistence{
					VolumeClaim: VolumeClaim{
						Enabled:         AutoSwitchAuto,
						RetentionPolicy: "Retain",
						Size:            resource.MustParse("5Gi"),
						StorageClass:    "",
						AccessModes:     []string{"ReadWriteOnce"},
					},
					AddVolumes:           []corev1.Volume{},
					AddVolumeMounts:      []corev1.VolumeMount{},
					DataVolume:           []corev1.Volume{},
					VolumeClaimTemplates: []corev1.PersistentVolumeClaim{},
				},
				Resources: Resources{
					Limits:   map[string]resource.Quantity{"memory": resource.MustParse("2Gi")},
					Requests: map[string]resource.Quantity{"cpu": resource.MustParse("200m"), "memory": resource.MustParse("256Mi")},
				},
				HighAvailability: HighAvailability{Replicas: 1},
				Labels:           map[string]string{},
				Annotations:      map[string]string{},
				Pods:             PodMetadata{Labels: map[string]string{}, Annotations: map[string]string{}},
				Scheduling: Scheduling{
					NodeSelector:              map[string]string{},
					Affinity:                  &corev1.Affinity{},
					Tolerations:               []corev1.Toleration{},
					PodManagementPolicy:       "Parallel",
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{},
				},
				DNSConfig:   &corev1.PodDNSConfig{},
				HostAliases: []corev1.HostAlias{},
				Security: ControlPlaneSecurity{
					PodSecurityContext:       &corev1.PodSecurityContext{},
					ContainerSecurityContext: &corev1.SecurityContext{},
				},
				// The kube-apiserver container's probes: its start is
				// waited for each second (up to 3 minutes), its health
				// every 10 s, its readiness every 2 s.
				Probes: ControlPlaneProbes{
					LivenessProbe:  ProbeTiming{Enabled: true, FailureThreshold: 6, TimeoutSeconds: 1, PeriodSeconds: 10},
					ReadinessProbe: ProbeTiming{Enabled: true, FailureThreshold: 6, TimeoutSeconds: 1, PeriodSeconds: 1},
					StartupProbe:   ProbeTiming{Enabled: true, FailureThreshold: 180, TimeoutSeconds: 1, PeriodSeconds: 1},
				},
				Env:               []corev1.EnvVar{},
				InitContainers:    []corev1.Container{},
				SidecarContainers: []corev1.Container{},
			},
			Proxy: ControlPlaneProxy{ExtraSANs: []string{}},
			Distro: Distro{K8S: DistroK8S{
				APIServer:         DistroComponent{ExtraArgs: []string{}},
				ControllerManager: DistroComponent{ExtraArgs: []string{}},
				Scheduler:         DistroScheduler{ExtraArgs: []string{}},
			}},
			CoreDNS: CoreDNS{Deployment: CoreDNSDeployment{Resources: Resources{
				Limits:   map[string]resource.Quantity{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("512Mi")},
				Requests: map[string]resource.Quantity{"cpu": resource.MustParse("20m"), "memory": resource.MustParse("64Mi")},
			}}},
			Advanced: ControlPlaneAdvanced{
				ServiceAccount:         defaultServiceAccount(),
				WorkloadServiceAccount: defaultServiceAccount(),
				HeadlessService:        ObjectMetadata{Labels: map[string]string{}, Annotations: map[string]string{}},
				GlobalMetadata:         GlobalMetadata{Annotations: map[string]string{}},
			},
			Service: ControlPlaneService{
				Enabled: true, Labels: map[string]string{}, Annotations: map[string]string{},
				Spec: &corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
			},
			Ingress: ControlPlaneIngress{
				Host: "my-host.com", PathType: "ImplementationSpecific", Labels: map[string]string{},
				Annotations: map[string]string{ // vCluster's: TLS passed through by ingress-nginx
					"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS",
					"nginx.ingress.kubernetes.io/ssl-passthrough":  "true",
					"nginx.ingress.kubernetes.io/ssl-redirect":     "true",
				},
				Spec: &networkingv1.IngressSpec{TLS: []networkingv1.IngressTLS{}},
			},
		},
		Syncer: Syncer{
			Workers:      10,
			HostQPS:      1000,
			HostBurst:    2000,
			VirtualQPS:   1000,
			VirtualBurst: 2000,
		},
		Policies:         defaultPolicies(),
		ExportKubeConfig: ExportKubeConfig{AdditionalSecrets: []AdditionalKubeconfigSecret{}},
		RBAC: RBAC{
			Role:        RBACRole{Enabled: true, ExtraRules: []rbacv1.PolicyRule{}, OverwriteRules: []rbacv1.PolicyRule{}},
			ClusterRole: RBACClusterRole{Enabled: AutoSwitchAuto, ExtraRules: []rbacv1.PolicyRule{}, OverwriteRules: []rbacv1.PolicyRule{}},
		},
	}
}

// defaultServiceAccount is the default of both host ServiceAccounts of
// controlPlane.advanced: made, under its default name.
func defaultServiceAccount() ControlPlaneServiceAccount {
	return ControlPlaneServiceAccount{Enabled: true, ImagePullSecrets: []corev1.LocalObjectReference{},
		Labels: map[string]string{}, Annotations: map[string]string{}}
}

// defaultPolicies are clustersync's secure defaults: vCluster's quota,
// limit range and network policy values, each switched on, pods checked at
// the baseline level, every isolation rule on.
func defaultPolicies() Policies {
	q := resource.MustParse
	return Policies{
		PodSecurityStandard: PodSecurityBaseline,
		ResourceQuota: ResourceQuota{Enabled: AutoSwitchAuto, Labels: map[string]string{}, Annotations: map[string]string{},
			Quota: map[string]resource.Quantity{
				"requests.cpu": q("10"), "requests.memory": q("20Gi"), "requests.storage": q("100Gi"),
				"requests.ephemeral-storage": q("60Gi"), "limits.cpu": q("20"), "limits.memory": q("40Gi"),
				"limits.ephemeral-storage": q("160Gi"), "services.nodeports": q("0"), "services.loadbalancers": q("1"),
				"count/endpoints": q("40"), "count/pods": q("20"), "count/services": q("20"), "count/secrets": q("100"),
				"count/configmaps": q("100"), "count/persistentvolumeclaims": q("20"),
			},
			Scopes: []string{}},
		LimitRange: LimitRange{Enabled: AutoSwitchAuto, Labels: map[string]string{}, Annotations: map[string]string{},
			Default:        map[string]resource.Quantity{"ephemeral-storage": q("8Gi"), "memory": q("512Mi"), "cpu": q("1")},
			DefaultRequest: map[string]resource.Quantity{"ephemeral-storage": q("0"), "memory": q("128Mi"), "cpu": q("100m")},
			Min:            map[string]resource.Quantity{}, Max: map[string]resource.Quantity{}},
		NetworkPolicy: NetworkPolicy{Enabled: true, Labels: map[string]string{}, Annotations: map[string]string{},
			FallbackDNS: "8.8.8.8",
			OutgoingConnections: OutgoingConnections{IPBlock: IPBlock{CIDR: "0.0.0.0/0",
				Except: []string{"100.64.0.0/10", "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"}}},
			ExtraControlPlaneRules: []any{}, ExtraWorkloadRules: []any{},
			ControlPlane: NetworkPolicyRules{Ingress: []networkingv1.NetworkPolicyIngressRule{}, Egress: []networkingv1.NetworkPolicyEgressRule{}},
			Workload:     WorkloadNetworkPolicy{Ingress: []networkingv1.NetworkPolicyIngressRule{}, Egress: []networkingv1.NetworkPolicyEgressRule{}}},
		Isolation: Isolation{NodeName: true, Tolerations: true, ExternalIPs: true, Endpoints: true},
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
