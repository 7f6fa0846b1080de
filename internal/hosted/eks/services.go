package eks

import (
	"context"

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
}

var _ API = (*eks.Client)(nil)
