package aks

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
)

// The request bodies of the operator's calls, built from the spec (a
// create) or from the GET of the same pass with the pushed fields only
// over it (an update): a stale PUT that reverts someone else's change
// (rancher/rancher#33561) cannot be built.

// workspaceID is the resource ID of a Log Analytics workspace.
func workspaceID(sub, group, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.OperationalInsights/workspaces/%s", sub, group, name)
}

// subnetID is the resource ID of a subnet of a virtual network.
func subnetID(sub, group, vnet, subnet string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/virtualNetworks/%s/subnets/%s", sub, group, vnet, subnet)
}

// azureTags converts managed tags for the SDK; nil for unmanaged.
func azureTags(tags *map[string]string) map[string]*string {
	if tags == nil {
		return nil
	}
	out := map[string]*string{}
	for k, v := range *tags {
		out[k] = to.Ptr(v)
	}
	return out
}

// createCluster is the managed cluster a create PUT sends for spec: every
// non-nil field, a system-assigned identity unless managedIdentity is
// false (then the credential's service principal, sp, as Rancher does),
// and the pools.
func createCluster(sub string, spec aksv1.AKSClusterConfigSpec, sp *armcontainerservice.ManagedClusterServicePrincipalProfile) armcontainerservice.ManagedCluster {
	p := &armcontainerservice.ManagedClusterProperties{
		KubernetesVersion: spec.KubernetesVersion, DNSPrefix: spec.DNSPrefix, EnableRBAC: to.Ptr(true), NodeResourceGroup: spec.NodeResourceGroup,
		NetworkProfile: &armcontainerservice.NetworkProfile{
			NetworkPlugin: (*armcontainerservice.NetworkPlugin)(spec.NetworkPlugin), NetworkPolicy: (*armcontainerservice.NetworkPolicy)(spec.NetworkPolicy),
			PodCidr: spec.PodCIDR, ServiceCidr: spec.ServiceCIDR, DNSServiceIP: spec.DNSServiceIP,
			OutboundType: (*armcontainerservice.OutboundType)(spec.OutboundType), LoadBalancerSKU: (*armcontainerservice.LoadBalancerSKU)(spec.LoadBalancerSKU),
		},
		APIServerAccessProfile: &armcontainerservice.ManagedClusterAPIServerAccessProfile{EnablePrivateCluster: spec.PrivateCluster, PrivateDNSZone: spec.PrivateDNSZone},
		AddonProfiles:          map[string]*armcontainerservice.ManagedClusterAddonProfile{},
	}
	if spec.AuthorizedIPRanges != nil {
		p.APIServerAccessProfile.AuthorizedIPRanges = to.SliceOfPtrs(*spec.AuthorizedIPRanges...)
	}
	setAddons(p, sub, spec)
	if spec.LinuxAdminUsername != nil {
		p.LinuxProfile = &armcontainerservice.LinuxProfile{AdminUsername: spec.LinuxAdminUsername}
		if spec.SSHPublicKey != nil {
			p.LinuxProfile.SSH = &armcontainerservice.SSHConfiguration{PublicKeys: []*armcontainerservice.SSHPublicKey{{KeyData: spec.SSHPublicKey}}}
		}
	}
	for _, np := range pools(spec) {
		prof := poolProperties(sub, spec, np)
		p.AgentPoolProfiles = append(p.AgentPoolProfiles, profileFrom(np.Name, prof))
	}
	mc := armcontainerservice.ManagedCluster{Location: to.Ptr(spec.ResourceLocation), Tags: azureTags(spec.Tags), Properties: p}
	switch {
	case spec.ManagedIdentity != nil && !*spec.ManagedIdentity:
		p.ServicePrincipalProfile = sp
	case spec.UserAssignedIdentity != nil && *spec.UserAssignedIdentity != "":
		mc.Identity = &armcontainerservice.ManagedClusterIdentity{Type: to.Ptr(armcontainerservice.ResourceIdentityTypeUserAssigned),
			UserAssignedIdentities: map[string]*armcontainerservice.ManagedServiceIdentityUserAssignedIdentitiesValue{*spec.UserAssignedIdentity: {}}}
	default:
		mc.Identity = &armcontainerservice.ManagedClusterIdentity{Type: to.Ptr(armcontainerservice.ResourceIdentityTypeSystemAssigned)}
	}
	return mc
}

// setAddons sets the add-on profiles spec manages: HTTP application
// routing and monitoring (with its workspace).
func setAddons(p *armcontainerservice.ManagedClusterProperties, sub string, spec aksv1.AKSClusterConfigSpec) {
	if p.AddonProfiles == nil {
		p.AddonProfiles = map[string]*armcontainerservice.ManagedClusterAddonProfile{}
	}
	if spec.HTTPApplicationRouting != nil {
		p.AddonProfiles[addonHTTPRouting] = &armcontainerservice.ManagedClusterAddonProfile{Enabled: to.Ptr(*spec.HTTPApplicationRouting)}
	}
	if spec.Monitoring != nil {
		a := &armcontainerservice.ManagedClusterAddonProfile{Enabled: to.Ptr(*spec.Monitoring)}
		if *spec.Monitoring && spec.LogAnalyticsWorkspaceGroup != nil && spec.LogAnalyticsWorkspaceName != nil {
			a.Config = map[string]*string{workspaceKey: to.Ptr(workspaceID(sub, *spec.LogAnalyticsWorkspaceGroup, *spec.LogAnalyticsWorkspaceName))}
		}
		p.AddonProfiles[addonMonitoring] = a
	}
}

// poolProperties is a new pool as spec's pool np has it; its subnet is its
// own vnetSubnetID, else the cluster's virtualNetwork/subnet.
func poolProperties(sub string, spec aksv1.AKSClusterConfigSpec, np aksv1.AKSNodePool) *armcontainerservice.ManagedClusterAgentPoolProfileProperties {
	p := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Count: np.Count, MaxPods: np.MaxPods, VMSize: np.VMSize, OSDiskSizeGB: np.OsDiskSizeGB, OSDiskType: (*armcontainerservice.OSDiskType)(np.OsDiskType),
		Mode: (*armcontainerservice.AgentPoolMode)(np.Mode), OSType: (*armcontainerservice.OSType)(np.OsType), OrchestratorVersion: np.OrchestratorVersion,
		EnableAutoScaling: np.EnableAutoScaling, VnetSubnetID: np.VnetSubnetID, Type: to.Ptr(armcontainerservice.AgentPoolTypeVirtualMachineScaleSets),
	}
	if p.Count == nil {
		p.Count = to.Ptr(int32(1))
	}
	if np.EnableAutoScaling != nil && *np.EnableAutoScaling {
		p.MinCount, p.MaxCount = np.MinCount, np.MaxCount
		if np.MinCount != nil && (np.Count == nil || *np.Count < *np.MinCount) {
			p.Count = np.MinCount
		}
	}
	if np.AvailabilityZones != nil {
		p.AvailabilityZones = to.SliceOfPtrs(*np.AvailabilityZones...)
	}
	if np.MaxSurge != nil {
		p.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: np.MaxSurge}
	}
	if np.NodeLabels != nil {
		p.NodeLabels = azureTags(np.NodeLabels)
	}
	if np.NodeTaints != nil {
		p.NodeTaints = to.SliceOfPtrs(*np.NodeTaints...)
	}
	if p.VnetSubnetID == nil && spec.VirtualNetwork != nil && spec.Subnet != nil {
		group := spec.ResourceGroup
		if spec.VirtualNetworkResourceGroup != nil {
			group = *spec.VirtualNetworkResourceGroup
		}
		p.VnetSubnetID = to.Ptr(subnetID(sub, group, *spec.VirtualNetwork, *spec.Subnet))
	}
	return p
}

// profileFrom is pool properties as a cluster's pool profile.
func profileFrom(name string, p *armcontainerservice.ManagedClusterAgentPoolProfileProperties) *armcontainerservice.ManagedClusterAgentPoolProfile {
	return &armcontainerservice.ManagedClusterAgentPoolProfile{Name: to.Ptr(name),
		AvailabilityZones: p.AvailabilityZones, Count: p.Count, EnableAutoScaling: p.EnableAutoScaling, MaxCount: p.MaxCount, MaxPods: p.MaxPods,
		MinCount: p.MinCount, Mode: p.Mode, NodeLabels: p.NodeLabels, NodeTaints: p.NodeTaints, OSDiskSizeGB: p.OSDiskSizeGB, OSDiskType: p.OSDiskType,
		OSType: p.OSType, OrchestratorVersion: p.OrchestratorVersion, UpgradeSettings: p.UpgradeSettings, VMSize: p.VMSize, VnetSubnetID: p.VnetSubnetID,
		Type: p.Type,
	}
}

// updateCluster is the full PUT of a cluster-field change: mc as this
// pass read it, with target's value for each field of fields only.
func updateCluster(sub string, mc *armcontainerservice.ManagedCluster, target aksv1.AKSClusterConfigSpec, fields []string) armcontainerservice.ManagedCluster {
	out := *mc
	props := *mc.Properties
	out.Properties = &props
	for _, f := range fields {
		switch f {
		case "kubernetesVersion":
			props.KubernetesVersion = target.KubernetesVersion
		case "authorizedIpRanges":
			access := armcontainerservice.ManagedClusterAPIServerAccessProfile{}
			if props.APIServerAccessProfile != nil {
				access = *props.APIServerAccessProfile
			}
			access.AuthorizedIPRanges = to.SliceOfPtrs(ptr.Deref(target.AuthorizedIPRanges, nil)...)
			props.APIServerAccessProfile = &access
		case "httpApplicationRouting", "monitoring", "logAnalyticsWorkspaceGroup", "logAnalyticsWorkspaceName":
			addons := map[string]*armcontainerservice.ManagedClusterAddonProfile{}
			for k, v := range props.AddonProfiles {
				addons[k] = v
			}
			props.AddonProfiles = addons
			only := aksv1.AKSClusterConfigSpec{LogAnalyticsWorkspaceGroup: target.LogAnalyticsWorkspaceGroup, LogAnalyticsWorkspaceName: target.LogAnalyticsWorkspaceName}
			if f == "httpApplicationRouting" {
				only.HTTPApplicationRouting = target.HTTPApplicationRouting
			} else {
				only.Monitoring = target.Monitoring
			}
			setAddons(&props, sub, only)
		case "sshPublicKey":
			linux := armcontainerservice.LinuxProfile{}
			if props.LinuxProfile != nil {
				linux = *props.LinuxProfile
			}
			linux.SSH = &armcontainerservice.SSHConfiguration{PublicKeys: []*armcontainerservice.SSHPublicKey{{KeyData: target.SSHPublicKey}}}
			props.LinuxProfile = &linux
		}
	}
	return out
}

// updatePool is the full PUT of a pool change: the pool cur as this pass
// read it, with target's value for each field of fields only. A pool the
// autoscaler scales keeps its count; turning autoscaling off sends count.
func updatePool(cur *armcontainerservice.ManagedClusterAgentPoolProfile, target aksv1.AKSNodePool, fields []string) armcontainerservice.AgentPool {
	_, p := profileOf(cur)
	p.CurrentOrchestratorVersion, p.ETag, p.ProvisioningState = nil, nil, nil
	for _, f := range fields {
		switch f {
		case "count":
			p.Count = target.Count
		case "orchestratorVersion":
			p.OrchestratorVersion = target.OrchestratorVersion
		case "mode":
			p.Mode = (*armcontainerservice.AgentPoolMode)(target.Mode)
		case "maxSurge":
			p.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: target.MaxSurge}
		case "nodeLabels":
			p.NodeLabels = azureTags(target.NodeLabels)
		case "nodeTaints":
			p.NodeTaints = to.SliceOfPtrs(ptr.Deref(target.NodeTaints, nil)...)
		case "enableAutoScaling", "minCount", "maxCount":
			p.EnableAutoScaling, p.MinCount, p.MaxCount = target.EnableAutoScaling, target.MinCount, target.MaxCount
			if target.EnableAutoScaling == nil || !*target.EnableAutoScaling {
				p.MinCount, p.MaxCount = nil, nil
				if target.Count != nil {
					p.Count = target.Count
				}
			}
		}
	}
	return armcontainerservice.AgentPool{Properties: p}
}

// fieldsOf returns the field names of a call's paths: "kubernetesVersion",
// or "count" for "nodePools[a].count".
func fieldsOf(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, f, ok := splitPoolPath(p); ok {
			out = append(out, f)
			continue
		}
		out = append(out, strings.TrimSpace(p))
	}
	return out
}
