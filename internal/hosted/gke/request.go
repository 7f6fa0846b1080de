package gke

import (
	"fmt"
	"maps"
	"slices"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
)

// The request messages of the operator's calls, built from the spec (a
// create) or from the target values of one pushed field (an update): each
// update call carries one field only, so a stale value of another field
// cannot be sent back to GKE.

// createCluster is the cluster a create call sends for spec: every non-nil
// field, its pools included.
func createCluster(spec gkev1.GKEClusterConfigSpec) *containerpb.Cluster {
	cl := &containerpb.Cluster{
		Name:                  spec.ClusterName,
		Description:           ptr.Deref(spec.Description, ""),
		InitialClusterVersion: ptr.Deref(spec.KubernetesVersion, ""),
		ResourceLabels:        maps.Clone(ptr.Deref(spec.Labels, nil)),
		EnableKubernetesAlpha: ptr.Deref(spec.EnableKubernetesAlpha, false),
		ClusterIpv4Cidr:       ptr.Deref(spec.ClusterIpv4CidrBlock, ""),
		LoggingService:        ptr.Deref(spec.LoggingService, ""),
		MonitoringService:     ptr.Deref(spec.MonitoringService, ""),
		Network:               ptr.Deref(spec.Network, ""),
		Subnetwork:            ptr.Deref(spec.Subnetwork, ""),
		Locations:             slices.Clone(ptr.Deref(spec.Locations, nil)),
	}
	if spec.ClusterAddons != nil {
		cl.AddonsConfig = addonsConfig(*spec.ClusterAddons)
	}
	if spec.NetworkPolicyEnabled != nil {
		cl.NetworkPolicy = networkPolicy(*spec.NetworkPolicyEnabled)
	}
	if p := spec.PrivateClusterConfig; p != nil {
		cl.PrivateClusterConfig = &containerpb.PrivateClusterConfig{EnablePrivateEndpoint: p.EnablePrivateEndpoint,
			EnablePrivateNodes: p.EnablePrivateNodes, MasterIpv4CidrBlock: p.MasterIpv4CidrBlock}
	}
	if ip := spec.IPAllocationPolicy; ip != nil {
		cl.IpAllocationPolicy = &containerpb.IPAllocationPolicy{ClusterIpv4CidrBlock: ip.ClusterIpv4CidrBlock, ClusterSecondaryRangeName: ip.ClusterSecondaryRangeName,
			CreateSubnetwork: ip.CreateSubnetwork, NodeIpv4CidrBlock: ip.NodeIpv4CidrBlock, ServicesIpv4CidrBlock: ip.ServicesIpv4CidrBlock,
			ServicesSecondaryRangeName: ip.ServicesSecondaryRangeName, SubnetworkName: ip.SubnetworkName, UseIpAliases: ip.UseIPAliases}
	}
	if m := spec.MasterAuthorizedNetworksConfig; m != nil {
		cl.MasterAuthorizedNetworksConfig = masterAuthorizedNetworks(*m)
	}
	if w := ptr.Deref(spec.MaintenanceWindow, ""); w != "" {
		cl.MaintenancePolicy = maintenancePolicy(w)
	}
	if a := spec.AutopilotConfig; a != nil && a.Enabled {
		cl.Autopilot = &containerpb.Autopilot{Enabled: true}
	}
	if k := spec.CustomerManagedEncryptionKey; k != nil {
		cl.DatabaseEncryption = &containerpb.DatabaseEncryption{State: containerpb.DatabaseEncryption_ENCRYPTED, KeyName: kmsKeyName(spec, *k)}
	}
	for _, p := range pools(spec) {
		cl.NodePools = append(cl.NodePools, nodePool(p))
	}
	return cl
}

// nodePool is a new pool as the spec has it. A pool without a size gets
// GKE's default of 3 nodes per zone; an autoscaled one starts at its
// minimum.
func nodePool(p gkev1.GKENodePoolConfig) *containerpb.NodePool {
	np := &containerpb.NodePool{Name: p.Name, Version: ptr.Deref(p.Version, ""), InitialNodeCount: int32(ptr.Deref(p.InitialNodeCount, 3))}
	if p.MaxPodsConstraint != nil {
		np.MaxPodsConstraint = &containerpb.MaxPodsConstraint{MaxPodsPerNode: *p.MaxPodsConstraint}
	}
	if a := p.Autoscaling; a != nil {
		np.Autoscaling = autoscaling(*a)
		if a.Enabled && p.InitialNodeCount == nil {
			np.InitialNodeCount = int32(max(a.MinNodeCount, 1))
		}
	}
	if m := p.Management; m != nil {
		np.Management = &containerpb.NodeManagement{AutoRepair: m.AutoRepair, AutoUpgrade: m.AutoUpgrade}
	}
	if c := p.Config; c != nil {
		np.Config = &containerpb.NodeConfig{BootDiskKmsKey: c.BootDiskKmsKey, DiskSizeGb: int32(c.DiskSizeGb), DiskType: c.DiskType, ImageType: c.ImageType,
			Labels: maps.Clone(c.Labels), LocalSsdCount: int32(c.LocalSsdCount), MachineType: c.MachineType, OauthScopes: slices.Clone(c.OauthScopes),
			Preemptible: c.Preemptible, Tags: slices.Clone(c.Tags), Taints: taints(c.Taints), ServiceAccount: c.ServiceAccount}
	}
	return np
}

func addonsConfig(a gkev1.GKEClusterAddons) *containerpb.AddonsConfig {
	return &containerpb.AddonsConfig{
		HttpLoadBalancing:        &containerpb.HttpLoadBalancing{Disabled: !a.HTTPLoadBalancing},
		HorizontalPodAutoscaling: &containerpb.HorizontalPodAutoscaling{Disabled: !a.HorizontalPodAutoscaling},
		NetworkPolicyConfig:      &containerpb.NetworkPolicyConfig{Disabled: !a.NetworkPolicyConfig},
	}
}

// networkPolicy is Calico network policy on or off, as Rancher sets it.
func networkPolicy(enabled bool) *containerpb.NetworkPolicy {
	return &containerpb.NetworkPolicy{Provider: containerpb.NetworkPolicy_CALICO, Enabled: enabled}
}

func masterAuthorizedNetworks(m gkev1.GKEMasterAuthorizedNetworksConfig) *containerpb.MasterAuthorizedNetworksConfig {
	out := &containerpb.MasterAuthorizedNetworksConfig{Enabled: m.Enabled}
	for _, b := range m.CidrBlocks {
		out.CidrBlocks = append(out.CidrBlocks, &containerpb.MasterAuthorizedNetworksConfig_CidrBlock{CidrBlock: b.CidrBlock, DisplayName: b.DisplayName})
	}
	return out
}

// maintenancePolicy is a daily window starting at start (HH:MM, UTC); ""
// means no window.
func maintenancePolicy(start string) *containerpb.MaintenancePolicy {
	if start == "" {
		return &containerpb.MaintenancePolicy{}
	}
	return &containerpb.MaintenancePolicy{Window: &containerpb.MaintenanceWindow{Policy: &containerpb.MaintenanceWindow_DailyMaintenanceWindow{
		DailyMaintenanceWindow: &containerpb.DailyMaintenanceWindow{StartTime: start}}}}
}

func autoscaling(a gkev1.GKENodePoolAutoscaling) *containerpb.NodePoolAutoscaling {
	if !a.Enabled {
		return &containerpb.NodePoolAutoscaling{}
	}
	return &containerpb.NodePoolAutoscaling{Enabled: true, MinNodeCount: int32(a.MinNodeCount), MaxNodeCount: int32(a.MaxNodeCount)}
}

func taints(ts []gkev1.GKENodeTaintConfig) []*containerpb.NodeTaint {
	var out []*containerpb.NodeTaint
	for _, t := range ts {
		out = append(out, &containerpb.NodeTaint{Key: t.Key, Value: t.Value, Effect: containerpb.NodeTaint_Effect(containerpb.NodeTaint_Effect_value[t.Effect])})
	}
	return out
}

// clusterUpdate is the one-field ClusterUpdate of a pushed cluster field,
// with target's value; etag is the cluster's as this pass read it.
func clusterUpdate(field string, target gkev1.GKEClusterConfigSpec, etag string) (*containerpb.ClusterUpdate, error) {
	u := &containerpb.ClusterUpdate{Etag: etag}
	switch field {
	case "kubernetesVersion":
		u.DesiredMasterVersion = ptr.Deref(target.KubernetesVersion, "")
	case "clusterAddons":
		u.DesiredAddonsConfig = addonsConfig(ptr.Deref(target.ClusterAddons, gkev1.GKEClusterAddons{}))
	case "masterAuthorizedNetworks":
		u.DesiredMasterAuthorizedNetworksConfig = masterAuthorizedNetworks(ptr.Deref(target.MasterAuthorizedNetworksConfig, gkev1.GKEMasterAuthorizedNetworksConfig{}))
	case "loggingService":
		u.DesiredLoggingService = ptr.Deref(target.LoggingService, "")
		if u.DesiredLoggingService == "" {
			u.DesiredLoggingService = "none"
		}
	case "monitoringService":
		u.DesiredMonitoringService = ptr.Deref(target.MonitoringService, "")
		if u.DesiredMonitoringService == "" {
			u.DesiredMonitoringService = "none"
		}
	case "locations":
		u.DesiredLocations = slices.Clone(ptr.Deref(target.Locations, nil))
	default:
		return nil, fmt.Errorf("%s: not a field of a cluster update", field)
	}
	return u, nil
}
