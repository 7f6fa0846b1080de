package eks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
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

// reading is the whole upstream of a described cluster: its spec
// (upstream), Kubernetes version, endpoint and CA. The operator's passes
// (Observe) and the management controller's refresh (Describe) both read
// it, so that either's reading serves the other (engine.Readings).
func reading(ctx context.Context, cs *Clients, config eksv1.EKSClusterConfigSpec, status eksv1.EKSClusterConfigStatus, cl *ekstypes.Cluster, ngs []*ekstypes.Nodegroup) (engine.Upstream[eksv1.EKSClusterConfigSpec], error) {
	spec, err := upstream(ctx, cs, config, status, cl, ngs)
	if err != nil {
		return engine.Upstream[eksv1.EKSClusterConfigSpec]{}, err
	}
	up := engine.Upstream[eksv1.EKSClusterConfigSpec]{Spec: spec, Version: aws.ToString(spec.KubernetesVersion), Endpoint: aws.ToString(cl.Endpoint)}
	if cl.CertificateAuthority != nil {
		up.CACert = aws.ToString(cl.CertificateAuthority.Data)
	}
	return up, nil
}

// upstream returns UpstreamSpec of a described cluster, completed with
// what EKS does not describe in the cluster and its node groups: whether
// the EBS CSI driver add-on (EBSCSIDriverAddon) is installed, and the
// diskSize, instanceType, ec2SshKey, userData, imageId and resourceTags of
// node groups on the operator's managed launch template
// (status.managedLaunchTemplateID), read from their template versions
// with cs.EC2 (needed only when such node groups exist); their
// launchTemplate is left nil, the template being the operator's (Rancher
// reports it so). Errors are the SDK's, wrapped with the call.
func upstream(ctx context.Context, cs *Clients, config eksv1.EKSClusterConfigSpec, status eksv1.EKSClusterConfigStatus, cl *ekstypes.Cluster, ngs []*ekstypes.Nodegroup) (eksv1.EKSClusterConfigSpec, error) {
	ebs, err := ebsCSIDriverInstalled(ctx, cs.EKS, aws.ToString(cl.Name))
	if err != nil {
		return eksv1.EKSClusterConfigSpec{}, err
	}
	up := UpstreamSpec(config, cl, ngs, ebs)
	if err := templateUpstream(ctx, cs.EC2, status.ManagedLaunchTemplateID, ngs, &up); err != nil {
		return up, err
	}
	return up, nil
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

// Describe reads a cluster and all its node groups.
func Describe(ctx context.Context, api API, cluster string) (*ekstypes.Cluster, []*ekstypes.Nodegroup, error) {
	name := aws.String(cluster)
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: name})
	if err != nil {
		return nil, nil, fmt.Errorf("describe cluster %s: %w", cluster, err)
	}
	list, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: name})
	if err != nil {
		return nil, nil, fmt.Errorf("list node groups of %s: %w", cluster, err)
	}
	ngs := make([]*ekstypes.Nodegroup, 0, len(list.Nodegroups))
	for _, n := range list.Nodegroups {
		d, err := api.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: name, NodegroupName: aws.String(n)})
		if err != nil {
			return nil, nil, fmt.Errorf("describe node group %s: %w", n, err)
		}
		ngs = append(ngs, d.Nodegroup)
	}
	return out.Cluster, ngs, nil
}
