package aks

import (
	"path"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Names of the add-on profiles clustersync manages.
const (
	addonHTTPRouting = "httpApplicationRouting"
	addonMonitoring  = "omsagent"
	// workspaceKey is the monitoring add-on's workspace resource ID.
	workspaceKey = "logAnalyticsWorkspaceResourceID"
)

// Final provisioning states: anything else means Azure is changing the
// resource (Creating, Updating, Upgrading, Scaling, Deleting, ...).
var finalStates = []string{"Succeeded", "Failed", "Canceled"}

// settled reports whether a provisioning state is final.
func settled(state *string) bool {
	return state == nil || slices.ContainsFunc(finalStates, func(s string) bool { return strings.EqualFold(s, *state) })
}

// Busy reports whether Azure is changing mc or one of its pools, and says
// what: every provisioning state that is not final counts, whoever started
// the operation (Rancher checks only some of them).
func Busy(mc *armcontainerservice.ManagedCluster) (bool, string) {
	if p := mc.Properties; p != nil {
		if !settled(p.ProvisioningState) {
			return true, "the cluster is " + *p.ProvisioningState
		}
		for _, ap := range p.AgentPoolProfiles {
			if ap != nil && !settled(ap.ProvisioningState) {
				return true, "pool " + ptr.Deref(ap.Name, "") + " is " + *ap.ProvisioningState
			}
		}
	}
	return false, ""
}

// UpstreamSpec is mc as an AKSClusterConfigSpec, every field Azure has set
// (nil only for what Azure does not report), the identity fields taken
// from config. An autoscaled pool's count is config's (nil when config
// does not manage it): the autoscaler owns it, so it is neither pushed nor
// adopted (rancher/rancher#33446). Tags are {} when there are none.
func UpstreamSpec(config aksv1.AKSClusterConfigSpec, mc *armcontainerservice.ManagedCluster) aksv1.AKSClusterConfigSpec {
	var up aksv1.AKSClusterConfigSpec
	managed.WithIdentity(&up, config)
	tags := map[string]string{}
	for k, v := range mc.Tags {
		tags[k] = ptr.Deref(v, "")
	}
	up.Tags = &tags
	p := mc.Properties
	if p == nil {
		return up
	}
	up.KubernetesVersion = p.KubernetesVersion
	if p.CurrentKubernetesVersion != nil && up.KubernetesVersion == nil {
		up.KubernetesVersion = p.CurrentKubernetesVersion
	}
	up.DNSPrefix, up.NodeResourceGroup = p.DNSPrefix, p.NodeResourceGroup
	if n := p.NetworkProfile; n != nil {
		up.NetworkPlugin = (*string)(n.NetworkPlugin)
		up.NetworkPolicy = (*string)(n.NetworkPolicy)
		up.PodCIDR, up.ServiceCIDR, up.DNSServiceIP = n.PodCidr, n.ServiceCidr, n.DNSServiceIP
		up.OutboundType = (*string)(n.OutboundType)
		if n.LoadBalancerSKU != nil {
			up.LoadBalancerSKU = to.Ptr(strings.ToLower(string(*n.LoadBalancerSKU)))
		}
	}
	up.PrivateCluster, up.AuthorizedIPRanges = to.Ptr(false), &[]string{}
	if a := p.APIServerAccessProfile; a != nil {
		if a.EnablePrivateCluster != nil {
			up.PrivateCluster = a.EnablePrivateCluster
		}
		up.PrivateDNSZone = a.PrivateDNSZone
		ranges := []string{}
		for _, r := range a.AuthorizedIPRanges {
			ranges = append(ranges, ptr.Deref(r, ""))
		}
		up.AuthorizedIPRanges = &ranges
	}
	up.HTTPApplicationRouting, up.Monitoring = to.Ptr(false), to.Ptr(false)
	if a := p.AddonProfiles[addonHTTPRouting]; a != nil && a.Enabled != nil {
		up.HTTPApplicationRouting = a.Enabled
	}
	if a := p.AddonProfiles[addonMonitoring]; a != nil && a.Enabled != nil {
		up.Monitoring = a.Enabled
		if id := ptr.Deref(a.Config[workspaceKey], ""); id != "" {
			group, name := workspaceOf(id)
			up.LogAnalyticsWorkspaceGroup, up.LogAnalyticsWorkspaceName = &group, &name
		}
	}
	up.ManagedIdentity = to.Ptr(mc.Identity != nil && mc.Identity.Type != nil && *mc.Identity.Type != armcontainerservice.ResourceIdentityTypeNone)
	if id := mc.Identity; id != nil {
		for k := range id.UserAssignedIdentities {
			up.UserAssignedIdentity = to.Ptr(k)
		}
	}
	if l := p.LinuxProfile; l != nil {
		up.LinuxAdminUsername = l.AdminUsername
		if l.SSH != nil && len(l.SSH.PublicKeys) > 0 && l.SSH.PublicKeys[0] != nil {
			up.SSHPublicKey = l.SSH.PublicKeys[0].KeyData
		}
	}
	configPools := map[string]aksv1.AKSNodePool{}
	if config.NodePools != nil {
		for _, cp := range *config.NodePools {
			configPools[cp.Name] = cp
		}
	}
	pools := []aksv1.AKSNodePool{}
	for _, ap := range p.AgentPoolProfiles {
		if ap == nil || ap.Name == nil {
			continue
		}
		pool := upstreamPool(profileOf(ap))
		if pool.EnableAutoScaling != nil && *pool.EnableAutoScaling {
			pool.Count = configPools[pool.Name].Count
		}
		pools = append(pools, pool)
	}
	up.NodePools = &pools
	// The subnet of the pools names the virtual network.
	if len(pools) > 0 && pools[0].VnetSubnetID != nil {
		group, vnet, subnet := subnetOf(*pools[0].VnetSubnetID)
		up.VirtualNetworkResourceGroup, up.VirtualNetwork, up.Subnet = &group, &vnet, &subnet
	}
	return up
}

// profileOf returns the pool properties of a cluster's pool profile.
func profileOf(ap *armcontainerservice.ManagedClusterAgentPoolProfile) (string, *armcontainerservice.ManagedClusterAgentPoolProfileProperties) {
	return ptr.Deref(ap.Name, ""), &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		AvailabilityZones: ap.AvailabilityZones, Count: ap.Count, EnableAutoScaling: ap.EnableAutoScaling, MaxCount: ap.MaxCount, MaxPods: ap.MaxPods,
		MinCount: ap.MinCount, Mode: ap.Mode, NodeLabels: ap.NodeLabels, NodeTaints: ap.NodeTaints, OSDiskSizeGB: ap.OSDiskSizeGB, OSDiskType: ap.OSDiskType,
		OSType: ap.OSType, OrchestratorVersion: ap.OrchestratorVersion, UpgradeSettings: ap.UpgradeSettings, VMSize: ap.VMSize, VnetSubnetID: ap.VnetSubnetID,
		CurrentOrchestratorVersion: ap.CurrentOrchestratorVersion, ETag: ap.ETag, ProvisioningState: ap.ProvisioningState, Type: ap.Type,
	}
}

// upstreamPool is one pool as the config spec has it.
func upstreamPool(name string, p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) aksv1.AKSNodePool {
	out := aksv1.AKSNodePool{Name: name, Count: p.Count, MaxPods: p.MaxPods, VMSize: p.VMSize, OsDiskSizeGB: p.OSDiskSizeGB,
		OsDiskType: (*string)(p.OSDiskType), Mode: (*string)(p.Mode), OsType: (*string)(p.OSType), OrchestratorVersion: p.OrchestratorVersion,
		VnetSubnetID: p.VnetSubnetID, EnableAutoScaling: to.Ptr(p.EnableAutoScaling != nil && *p.EnableAutoScaling)}
	if out.OrchestratorVersion == nil {
		out.OrchestratorVersion = p.CurrentOrchestratorVersion
	}
	zones := []string{}
	for _, z := range p.AvailabilityZones {
		zones = append(zones, ptr.Deref(z, ""))
	}
	out.AvailabilityZones = &zones
	if *out.EnableAutoScaling {
		out.MinCount, out.MaxCount = p.MinCount, p.MaxCount
	}
	if p.UpgradeSettings != nil {
		out.MaxSurge = p.UpgradeSettings.MaxSurge
	}
	labels := map[string]string{}
	for k, v := range p.NodeLabels {
		labels[k] = ptr.Deref(v, "")
	}
	out.NodeLabels = &labels
	taints := []string{}
	for _, t := range p.NodeTaints {
		taints = append(taints, ptr.Deref(t, ""))
	}
	out.NodeTaints = &taints
	return out
}

// workspaceOf splits a Log Analytics workspace resource ID
// (/subscriptions/S/resourceGroups/G/providers/Microsoft.OperationalInsights/workspaces/N)
// into its resource group and name.
func workspaceOf(id string) (group, name string) {
	return segment(id, "resourceGroups"), path.Base(id)
}

// subnetOf splits a subnet resource ID
// (/subscriptions/S/resourceGroups/G/providers/Microsoft.Network/virtualNetworks/V/subnets/N).
func subnetOf(id string) (group, vnet, subnet string) {
	return segment(id, "resourceGroups"), segment(id, "virtualNetworks"), segment(id, "subnets")
}

// segment returns the path segment of id after the one named key (case
// insensitive, as ARM IDs are), "" when there is none.
func segment(id, key string) string {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], key) {
			return parts[i+1]
		}
	}
	return ""
}
