package eks

import (
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// UpstreamSpec is the spec as EKS reports it (status.eksStatus.upstreamSpec):
// every field EKS describes is set, so that nil keeps meaning "not reported".
// The identity fields come from identity (the config): Rancher never takes
// them from upstream. Node groups are sorted by name.
func UpstreamSpec(identity eksv1.EKSClusterConfigSpec, cl *ekstypes.Cluster, nodegroups []*ekstypes.Nodegroup, ebsCSIDriver bool) eksv1.EKSClusterConfigSpec {
	s := eksv1.EKSClusterConfigSpec{
		DisplayName: identity.DisplayName, Region: identity.Region,
		AmazonCredentialSecret: identity.AmazonCredentialSecret, Imported: identity.Imported,
		KubernetesVersion: cl.Version,
		Tags:              ptr(maps.Clone(nonNilMap(cl.Tags))),
		ServiceRole:       cl.RoleArn,
		EBSCSIDriver:      ptr(ebsCSIDriver),
	}
	if v := cl.ResourcesVpcConfig; v != nil {
		s.PublicAccess = ptr(v.EndpointPublicAccess)
		s.PrivateAccess = ptr(v.EndpointPrivateAccess)
		s.PublicAccessSources = ptr(slices.Clone(nonNilSlice(v.PublicAccessCidrs)))
		s.Subnets = ptr(slices.Clone(nonNilSlice(v.SubnetIds)))
		s.SecurityGroups = ptr(slices.Clone(nonNilSlice(v.SecurityGroupIds)))
	}
	logging := []string{}
	if cl.Logging != nil {
		for _, setup := range cl.Logging.ClusterLogging {
			if aws.ToBool(setup.Enabled) {
				for _, t := range setup.Types {
					logging = append(logging, string(t))
				}
			}
		}
	}
	slices.Sort(logging)
	s.LoggingTypes = &logging
	encrypted := false
	for _, e := range cl.EncryptionConfig {
		if slices.Contains(e.Resources, "secrets") && e.Provider != nil {
			encrypted = true
			s.KMSKey = e.Provider.KeyArn
		}
	}
	s.SecretsEncryption = &encrypted
	if n := cl.KubernetesNetworkConfig; n != nil && n.IpFamily != "" {
		s.IPFamily = ptr(string(n.IpFamily))
	}
	groups := make([]eksv1.NodeGroup, 0, len(nodegroups))
	for _, ng := range nodegroups {
		groups = append(groups, upstreamNodeGroup(ng))
	}
	slices.SortFunc(groups, func(a, b eksv1.NodeGroup) int {
		switch {
		case a.NodegroupName < b.NodegroupName:
			return -1
		case a.NodegroupName > b.NodegroupName:
			return 1
		}
		return 0
	})
	s.NodeGroups = &groups
	return s
}

func upstreamNodeGroup(ng *ekstypes.Nodegroup) eksv1.NodeGroup {
	out := eksv1.NodeGroup{
		NodegroupName: aws.ToString(ng.NodegroupName),
		DiskSize:      int64Ptr(ng.DiskSize),
		Labels:        ptr(maps.Clone(nonNilMap(ng.Labels))),
		Tags:          ptr(maps.Clone(nonNilMap(ng.Tags))),
		Subnets:       ptr(slices.Clone(nonNilSlice(ng.Subnets))),
		Version:       ng.Version,
		NodeRole:      ng.NodeRole,
	}
	if sc := ng.ScalingConfig; sc != nil {
		out.DesiredSize, out.MinSize, out.MaxSize = int64Ptr(sc.DesiredSize), int64Ptr(sc.MinSize), int64Ptr(sc.MaxSize)
	}
	spot := ng.CapacityType == ekstypes.CapacityTypesSpot
	out.RequestSpotInstances = &spot
	if spot {
		out.SpotInstanceTypes = ptr(slices.Clone(ng.InstanceTypes))
	} else if len(ng.InstanceTypes) > 0 {
		out.InstanceType = ptr(ng.InstanceTypes[0])
	}
	if ra := ng.RemoteAccess; ra != nil {
		out.Ec2SshKey = ra.Ec2SshKey
	}
	if lt := ng.LaunchTemplate; lt != nil {
		out.LaunchTemplate = &eksv1.LaunchTemplate{ID: lt.Id, Name: lt.Name}
		if v, err := strconv.ParseInt(aws.ToString(lt.Version), 10, 64); err == nil {
			out.LaunchTemplate.Version = &v
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func int64Ptr(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
