package eks

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// CreateClusterInput is the CreateCluster request for spec. Unset fields
// are left to EKS's defaults.
func CreateClusterInput(spec *eksv1.EKSClusterConfigSpec) *eks.CreateClusterInput {
	in := &eks.CreateClusterInput{
		Name:    aws.String(spec.DisplayName),
		Version: spec.KubernetesVersion,
		RoleArn: spec.ServiceRole,
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{
			EndpointPublicAccess:  spec.PublicAccess,
			EndpointPrivateAccess: spec.PrivateAccess,
		},
	}
	if spec.Subnets != nil {
		in.ResourcesVpcConfig.SubnetIds = *spec.Subnets
	}
	if spec.SecurityGroups != nil {
		in.ResourcesVpcConfig.SecurityGroupIds = *spec.SecurityGroups
	}
	if spec.PublicAccessSources != nil {
		in.ResourcesVpcConfig.PublicAccessCidrs = *spec.PublicAccessSources
	}
	if spec.Tags != nil && len(*spec.Tags) > 0 {
		in.Tags = *spec.Tags
	}
	if spec.LoggingTypes != nil && len(*spec.LoggingTypes) > 0 {
		types := make([]ekstypes.LogType, len(*spec.LoggingTypes))
		for i, t := range *spec.LoggingTypes {
			types[i] = ekstypes.LogType(t)
		}
		in.Logging = &ekstypes.Logging{ClusterLogging: []ekstypes.LogSetup{{Enabled: aws.Bool(true), Types: types}}}
	}
	if spec.SecretsEncryption != nil && *spec.SecretsEncryption && spec.KMSKey != nil {
		in.EncryptionConfig = []ekstypes.EncryptionConfig{{Provider: &ekstypes.Provider{KeyArn: spec.KMSKey}, Resources: []string{"secrets"}}}
	}
	if spec.IPFamily != nil {
		in.KubernetesNetworkConfig = &ekstypes.KubernetesNetworkConfigRequest{IpFamily: ekstypes.IpFamily(*spec.IPFamily)}
	}
	return in
}

// CreateNodegroupInput is the CreateNodegroup request for node group ng of
// cluster; nodeRole is used when the node group names none, clusterSubnets
// when it has no subnets. A node group without a launchTemplate of its own
// is launched from managed (a version of the managed launch template,
// which then carries its disk size, instance type and SSH key) when that
// is not nil. With a launch template, the request sets no disk size,
// remote access or (except the spot instance types) instance types: EKS
// refuses them next to a template.
func CreateNodegroupInput(cluster string, ng *eksv1.NodeGroup, nodeRole string, clusterSubnets []string, managed *ekstypes.LaunchTemplateSpecification) *eks.CreateNodegroupInput {
	in := &eks.CreateNodegroupInput{
		ClusterName:   aws.String(cluster),
		NodegroupName: aws.String(ng.NodegroupName),
		NodeRole:      aws.String(nodeRole),
		Subnets:       clusterSubnets,
		ScalingConfig: &ekstypes.NodegroupScalingConfig{},
		DiskSize:      int32Ptr(ng.DiskSize),
		Version:       ng.Version,
	}
	if ng.NodeRole != nil {
		in.NodeRole = ng.NodeRole
	}
	if ng.Subnets != nil && len(*ng.Subnets) > 0 {
		in.Subnets = *ng.Subnets
	}
	in.ScalingConfig.DesiredSize = int32Ptr(ng.DesiredSize)
	in.ScalingConfig.MinSize = int32Ptr(ng.MinSize)
	in.ScalingConfig.MaxSize = int32Ptr(ng.MaxSize)
	if ng.InstanceType != nil {
		in.InstanceTypes = []string{*ng.InstanceType}
	}
	if ng.Labels != nil && len(*ng.Labels) > 0 {
		in.Labels = *ng.Labels
	}
	if ng.Tags != nil && len(*ng.Tags) > 0 {
		in.Tags = *ng.Tags
	}
	if ng.Ec2SshKey != nil {
		in.RemoteAccess = &ekstypes.RemoteAccessConfig{Ec2SshKey: ng.Ec2SshKey}
	}
	if ng.RequestSpotInstances != nil && *ng.RequestSpotInstances {
		in.CapacityType = ekstypes.CapacityTypesSpot
		if ng.SpotInstanceTypes != nil {
			in.InstanceTypes = *ng.SpotInstanceTypes
		}
	}
	switch lt := ng.LaunchTemplate; {
	case lt != nil:
		in.LaunchTemplate = userTemplate(lt)
	case managed != nil:
		in.LaunchTemplate = managed
	}
	if in.LaunchTemplate != nil {
		in.DiskSize, in.RemoteAccess = nil, nil // they live in the template
		if in.CapacityType != ekstypes.CapacityTypesSpot {
			in.InstanceTypes = nil
		}
	}
	return in
}

// userTemplate is the EKS reference to a launch template of the user's.
func userTemplate(lt *eksv1.LaunchTemplate) *ekstypes.LaunchTemplateSpecification {
	out := &ekstypes.LaunchTemplateSpecification{Id: lt.ID, Name: lt.Name}
	if lt.Version != nil {
		out.Version = aws.String(strconv.FormatInt(*lt.Version, 10))
	}
	return out
}

func int32Ptr(v *int64) *int32 {
	if v == nil {
		return nil
	}
	n := int32(*v)
	return &n
}
