package gke

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Default logging and monitoring services: what GKE reports when the
// cluster sends logs and metrics to Cloud Logging and Cloud Monitoring.
const (
	DefaultLoggingService    = "logging.googleapis.com/kubernetes"
	DefaultMonitoringService = "monitoring.googleapis.com/kubernetes"
)

// busyCluster and busyPool are the statuses in which GKE is changing a
// cluster or a pool, whoever started the operation (Rancher waits only on
// some of them).
var (
	busyCluster = []containerpb.Cluster_Status{containerpb.Cluster_PROVISIONING, containerpb.Cluster_RECONCILING, containerpb.Cluster_STOPPING}
	busyPool    = []containerpb.NodePool_Status{containerpb.NodePool_PROVISIONING, containerpb.NodePool_RECONCILING, containerpb.NodePool_STOPPING}
)

// Busy reports whether GKE is changing cl or one of its pools, and says
// what.
func Busy(cl *containerpb.Cluster) (bool, string) {
	if slices.Contains(busyCluster, cl.GetStatus()) {
		return true, "the cluster is " + cl.GetStatus().String()
	}
	for _, np := range cl.GetNodePools() {
		if slices.Contains(busyPool, np.GetStatus()) {
			return true, "pool " + np.GetName() + " is " + np.GetStatus().String()
		}
	}
	return false, ""
}

// AtPrecision reports version (GKE's full form, "1.31.5-gke.1000000") at
// the precision of like: "1.31" for a like of MAJOR.MINOR, "1.31.5" for
// one of MAJOR.MINOR.PATCH, version itself otherwise. GKE moves patch
// versions on its own (auto-upgrades), so a config asking for "1.31" keeps
// seeing "1.31" while the cluster stays on that minor version.
func AtPrecision(version, like string) string {
	parts := strings.Count(like, ".") + 1
	if strings.Contains(like, "-") || like == "" {
		return version
	}
	base, _, _ := strings.Cut(version, "-")
	fields := strings.Split(base, ".")
	if parts >= len(fields) {
		return base
	}
	return strings.Join(fields[:parts], ".")
}

// baseVersion strips GKE's build suffix: "1.31.5-gke.1000000" → "1.31.5".
func baseVersion(v string) string {
	base, _, _ := strings.Cut(v, "-")
	return base
}

// UpstreamSpec is cl as a GKEClusterConfigSpec, every field GKE has set
// (nil only for what GKE does not report), the identity fields taken from
// config. Versions are reported at the precision config gives them in
// (AtPrecision). An autoscaled pool's initialNodeCount is config's (nil
// when config does not manage it): the autoscaler owns it, so it is
// neither pushed nor adopted. applied (the applied spec, nil when there is
// none) stands in for config for a pool config no longer has (one being
// removed), so that the pool compares with what was applied to it. Labels are {} when there are none; the
// maintenance window is "" when there is none. In privateClusterConfig,
// ipAllocationPolicy and a pool's config, a field config leaves empty
// (its zero value) is reported empty too: GKE fills it with a default,
// which is neither a change to push nor one to adopt.
func UpstreamSpec(config gkev1.GKEClusterConfigSpec, applied *gkev1.GKEClusterConfigSpec, cl *containerpb.Cluster) gkev1.GKEClusterConfigSpec {
	var up gkev1.GKEClusterConfigSpec
	managed.WithIdentity(&up, config)
	labels := maps.Clone(cl.GetResourceLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	up.Labels = &labels
	up.Description = ptr.To(cl.GetDescription())
	up.KubernetesVersion = ptr.To(AtPrecision(cl.GetCurrentMasterVersion(), ptr.Deref(config.KubernetesVersion, "")))
	up.EnableKubernetesAlpha = ptr.To(cl.GetEnableKubernetesAlpha())
	a := cl.GetAddonsConfig()
	up.ClusterAddons = &gkev1.GKEClusterAddons{
		HTTPLoadBalancing:        !a.GetHttpLoadBalancing().GetDisabled(),
		HorizontalPodAutoscaling: !a.GetHorizontalPodAutoscaling().GetDisabled(),
		NetworkPolicyConfig:      a.GetNetworkPolicyConfig() != nil && !a.GetNetworkPolicyConfig().GetDisabled(),
	}
	up.ClusterIpv4CidrBlock = ptr.To(cl.GetClusterIpv4Cidr())
	up.LoggingService, up.MonitoringService = ptr.To(cl.GetLoggingService()), ptr.To(cl.GetMonitoringService())
	up.Network, up.Subnetwork = ptr.To(cl.GetNetwork()), ptr.To(cl.GetSubnetwork())
	up.NetworkPolicyEnabled = ptr.To(cl.GetNetworkPolicy().GetEnabled())
	if p := cl.GetPrivateClusterConfig(); p != nil {
		up.PrivateClusterConfig = &gkev1.GKEPrivateClusterConfig{EnablePrivateEndpoint: p.GetEnablePrivateEndpoint(),
			EnablePrivateNodes: p.GetEnablePrivateNodes(), MasterIpv4CidrBlock: p.GetMasterIpv4CidrBlock()}
	} else {
		up.PrivateClusterConfig = &gkev1.GKEPrivateClusterConfig{}
	}
	maskUnset(up.PrivateClusterConfig, config.PrivateClusterConfig)
	ip := cl.GetIpAllocationPolicy()
	up.IPAllocationPolicy = &gkev1.GKEIPAllocationPolicy{ClusterIpv4CidrBlock: ip.GetClusterIpv4CidrBlock(), ClusterSecondaryRangeName: ip.GetClusterSecondaryRangeName(),
		CreateSubnetwork: ip.GetCreateSubnetwork(), NodeIpv4CidrBlock: ip.GetNodeIpv4CidrBlock(), ServicesIpv4CidrBlock: ip.GetServicesIpv4CidrBlock(),
		ServicesSecondaryRangeName: ip.GetServicesSecondaryRangeName(), SubnetworkName: ip.GetSubnetworkName(), UseIPAliases: ip.GetUseIpAliases()}
	maskUnset(up.IPAllocationPolicy, config.IPAllocationPolicy)
	up.MasterAuthorizedNetworksConfig = authorizedNetworks(cl.GetMasterAuthorizedNetworksConfig())
	locations := slices.Clone(cl.GetLocations())
	if locations == nil {
		locations = []string{}
	}
	up.Locations = &locations
	up.MaintenanceWindow = ptr.To(cl.GetMaintenancePolicy().GetWindow().GetDailyMaintenanceWindow().GetStartTime())
	up.AutopilotConfig = &gkev1.GKEAutopilotConfig{Enabled: cl.GetAutopilot().GetEnabled()}
	if key := cl.GetDatabaseEncryption().GetKeyName(); key != "" {
		up.CustomerManagedEncryptionKey = &gkev1.CMEKConfig{RingName: segment(key, "keyRings"), KeyName: segment(key, "cryptoKeys")}
	}
	configPools := map[string]gkev1.GKENodePoolConfig{}
	if applied != nil {
		for _, p := range pools(*applied) {
			configPools[p.Name] = p
		}
	}
	for _, p := range pools(config) {
		configPools[p.Name] = p
	}
	out := []gkev1.GKENodePoolConfig{}
	for _, np := range cl.GetNodePools() {
		if np.GetStatus() == containerpb.NodePool_STOPPING {
			continue // being deleted
		}
		out = append(out, upstreamPool(np, configPools[np.GetName()]))
	}
	up.NodePools = &out
	return up
}

// authorizedNetworks is GKE's master authorized networks as the spec has
// them; disabled with no blocks when GKE reports none.
func authorizedNetworks(m *containerpb.MasterAuthorizedNetworksConfig) *gkev1.GKEMasterAuthorizedNetworksConfig {
	out := &gkev1.GKEMasterAuthorizedNetworksConfig{Enabled: m.GetEnabled()}
	for _, b := range m.GetCidrBlocks() {
		out.CidrBlocks = append(out.CidrBlocks, gkev1.GKECidrBlock{CidrBlock: b.GetCidrBlock(), DisplayName: b.GetDisplayName()})
	}
	return out
}

// upstreamPool is one pool as the config spec has it; config is the
// config's pool of that name (zero when there is none).
func upstreamPool(np *containerpb.NodePool, config gkev1.GKENodePoolConfig) gkev1.GKENodePoolConfig {
	out := gkev1.GKENodePoolConfig{Name: np.GetName(), Version: ptr.To(AtPrecision(np.GetVersion(), ptr.Deref(config.Version, ""))),
		InitialNodeCount: ptr.To(int64(np.GetInitialNodeCount()))}
	if np.GetMaxPodsConstraint() != nil {
		out.MaxPodsConstraint = ptr.To(np.GetMaxPodsConstraint().GetMaxPodsPerNode())
	}
	as := np.GetAutoscaling()
	out.Autoscaling = &gkev1.GKENodePoolAutoscaling{Enabled: as.GetEnabled()}
	if as.GetEnabled() {
		out.Autoscaling.MinNodeCount, out.Autoscaling.MaxNodeCount = int64(as.GetMinNodeCount()), int64(as.GetMaxNodeCount())
		out.InitialNodeCount = config.InitialNodeCount
	}
	out.Management = &gkev1.GKENodePoolManagement{AutoRepair: np.GetManagement().GetAutoRepair(), AutoUpgrade: np.GetManagement().GetAutoUpgrade()}
	c := np.GetConfig()
	nc := &gkev1.GKENodeConfig{BootDiskKmsKey: c.GetBootDiskKmsKey(), DiskSizeGb: int64(c.GetDiskSizeGb()), DiskType: c.GetDiskType(),
		ImageType: c.GetImageType(), Labels: maps.Clone(c.GetLabels()), LocalSsdCount: int64(c.GetLocalSsdCount()), MachineType: c.GetMachineType(),
		OauthScopes: slices.Clone(c.GetOauthScopes()), Preemptible: c.GetPreemptible(), Tags: slices.Clone(c.GetTags()), ServiceAccount: c.GetServiceAccount()}
	for _, t := range c.GetTaints() {
		nc.Taints = append(nc.Taints, gkev1.GKENodeTaintConfig{Key: t.GetKey(), Value: t.GetValue(), Effect: t.GetEffect().String()})
	}
	maskUnset(nc, config.Config)
	out.Config = nc
	return out
}

// maskUnset zeroes each field of *up that is zero in *config (a struct
// of the same type); nothing when config is nil.
func maskUnset[T any](up, config *T) {
	if up == nil || config == nil {
		return
	}
	u, c := reflect.ValueOf(up).Elem(), reflect.ValueOf(config).Elem()
	for i := 0; i < c.NumField(); i++ {
		if c.Field(i).IsZero() {
			u.Field(i).SetZero()
		}
	}
}

// pools returns spec's node pools, nil when unmanaged.
func pools(spec gkev1.GKEClusterConfigSpec) []gkev1.GKENodePoolConfig {
	return ptr.Deref(spec.NodePools, nil)
}

// poolNamed returns the pool of spec named name, nil when there is none.
func poolNamed(spec gkev1.GKEClusterConfigSpec, name string) *gkev1.GKENodePoolConfig {
	return managed.Element(spec.NodePools, "name", name)
}

// autoscaled reports whether p has the autoscaler on.
func autoscaled(p *gkev1.GKENodePoolConfig) bool {
	return p != nil && p.Autoscaling != nil && p.Autoscaling.Enabled
}

// segment returns the path segment of a resource name after the one named
// key ("projects/p/locations/l/keyRings/r/cryptoKeys/k", "keyRings" → r),
// "" when there is none.
func segment(name, key string) string {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == key {
			return parts[i+1]
		}
	}
	return ""
}

// Resource names of GKE's API.

// parent is "projects/P/locations/L" of spec.
func parent(spec gkev1.GKEClusterConfigSpec) string {
	return fmt.Sprintf("projects/%s/locations/%s", spec.ProjectID, spec.Location())
}

// clusterName is "projects/P/locations/L/clusters/C" of spec.
func clusterName(spec gkev1.GKEClusterConfigSpec) string {
	return parent(spec) + "/clusters/" + spec.ClusterName
}

// poolName is the resource name of spec's pool name.
func poolName(spec gkev1.GKEClusterConfigSpec, name string) string {
	return clusterName(spec) + "/nodePools/" + name
}

// operationName is the resource name of spec's operation op.
func operationName(spec gkev1.GKEClusterConfigSpec, op string) string {
	return parent(spec) + "/operations/" + op
}

// kmsKeyName is the Cloud KMS key of a customerManagedEncryptionKey, in
// the cluster's region.
func kmsKeyName(spec gkev1.GKEClusterConfigSpec, k gkev1.CMEKConfig) string {
	region := spec.Region
	if region == "" {
		region = spec.Zone[:max(strings.LastIndex(spec.Zone, "-"), 0)]
	}
	return fmt.Sprintf("projects/%s/locations/%s/keyRings/%s/cryptoKeys/%s", spec.ProjectID, region, k.RingName, k.KeyName)
}
