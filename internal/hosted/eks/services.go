package eks

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// API is the part of the EKS API the operator calls; *eks.Client
// implements it, and tests point a real client at the emulator in ekstest.
type API interface {
	CreateCluster(ctx context.Context, in *eks.CreateClusterInput, opts ...func(*eks.Options)) (*eks.CreateClusterOutput, error)
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	DeleteCluster(ctx context.Context, in *eks.DeleteClusterInput, opts ...func(*eks.Options)) (*eks.DeleteClusterOutput, error)
	CreateNodegroup(ctx context.Context, in *eks.CreateNodegroupInput, opts ...func(*eks.Options)) (*eks.CreateNodegroupOutput, error)
	ListNodegroups(ctx context.Context, in *eks.ListNodegroupsInput, opts ...func(*eks.Options)) (*eks.ListNodegroupsOutput, error)
	DescribeNodegroup(ctx context.Context, in *eks.DescribeNodegroupInput, opts ...func(*eks.Options)) (*eks.DescribeNodegroupOutput, error)
	DeleteNodegroup(ctx context.Context, in *eks.DeleteNodegroupInput, opts ...func(*eks.Options)) (*eks.DeleteNodegroupOutput, error)
	UpdateClusterVersion(ctx context.Context, in *eks.UpdateClusterVersionInput, opts ...func(*eks.Options)) (*eks.UpdateClusterVersionOutput, error)
	UpdateClusterConfig(ctx context.Context, in *eks.UpdateClusterConfigInput, opts ...func(*eks.Options)) (*eks.UpdateClusterConfigOutput, error)
	UpdateNodegroupConfig(ctx context.Context, in *eks.UpdateNodegroupConfigInput, opts ...func(*eks.Options)) (*eks.UpdateNodegroupConfigOutput, error)
	UpdateNodegroupVersion(ctx context.Context, in *eks.UpdateNodegroupVersionInput, opts ...func(*eks.Options)) (*eks.UpdateNodegroupVersionOutput, error)
	ListUpdates(ctx context.Context, in *eks.ListUpdatesInput, opts ...func(*eks.Options)) (*eks.ListUpdatesOutput, error)
	DescribeUpdate(ctx context.Context, in *eks.DescribeUpdateInput, opts ...func(*eks.Options)) (*eks.DescribeUpdateOutput, error)
	TagResource(ctx context.Context, in *eks.TagResourceInput, opts ...func(*eks.Options)) (*eks.TagResourceOutput, error)
	UntagResource(ctx context.Context, in *eks.UntagResourceInput, opts ...func(*eks.Options)) (*eks.UntagResourceOutput, error)
	CreateAddon(ctx context.Context, in *eks.CreateAddonInput, opts ...func(*eks.Options)) (*eks.CreateAddonOutput, error)
	DescribeAddon(ctx context.Context, in *eks.DescribeAddonInput, opts ...func(*eks.Options)) (*eks.DescribeAddonOutput, error)
}

var _ API = (*eks.Client)(nil)

// CloudFormationAPI is the part of the CloudFormation API the operator
// calls to generate networking and IAM roles (Rancher's stacks);
// *cloudformation.Client implements it.
type CloudFormationAPI interface {
	CreateStack(ctx context.Context, in *cloudformation.CreateStackInput, opts ...func(*cloudformation.Options)) (*cloudformation.CreateStackOutput, error)
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, opts ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
	DeleteStack(ctx context.Context, in *cloudformation.DeleteStackInput, opts ...func(*cloudformation.Options)) (*cloudformation.DeleteStackOutput, error)
}

var _ CloudFormationAPI = (*cloudformation.Client)(nil)

// EC2API is the part of the EC2 API the operator calls to keep the managed
// launch template of node groups; *ec2.Client implements it.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	CreateLaunchTemplateVersion(ctx context.Context, in *ec2.CreateLaunchTemplateVersionInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error)
	DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, opts ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error)
	DescribeLaunchTemplateVersions(ctx context.Context, in *ec2.DescribeLaunchTemplateVersionsInput, opts ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplateVersionsOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
	DeleteLaunchTemplateVersions(ctx context.Context, in *ec2.DeleteLaunchTemplateVersionsInput, opts ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateVersionsOutput, error)
}

var _ EC2API = (*ec2.Client)(nil)

// Clients are the AWS clients of one region and credential. EKS is
// required; CloudFormation and EC2 are needed only to generate networking,
// roles and the managed launch template.
type Clients struct {
	// EKS is the EKS client.
	EKS API
	// CloudFormation creates and deletes the generated stacks.
	CloudFormation CloudFormationAPI
	// EC2 keeps the managed launch template.
	EC2 EC2API
}
