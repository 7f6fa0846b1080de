package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/access"
)

// Keys of the credential Secret, as Rancher names them
// (Rancher's EKS driver, https://github.com/rancher/eks-operator, "AWS Credential Secret Format").
const (
	AccessKeyField = "amazonec2credentialConfig-accessKey"
	SecretKeyField = "amazonec2credentialConfig-secretKey"
)

// ParseCredentialRef reads spec.amazonCredentialSecret, "namespace:name".
func ParseCredentialRef(ref string) (types.NamespacedName, error) {
	return access.CredentialRef(credentialField, ref)
}

// LoadClients reads the credential Secret that spec.amazonCredentialSecret
// names ("namespace:name") with k and makes the region's AWS clients from
// its data with newClients. It returns the clients and the Secret's data
// (the IAM token of the cluster's API server is signed with the same
// keys). Errors name the field or the Secret.
func LoadClients(ctx context.Context, k client.Reader, newClients ClientsFactory, spec eksv1.EKSClusterConfigSpec) (*Clients, map[string][]byte, error) {
	if newClients == nil {
		return nil, nil, errors.New("no AWS clients: the reconciler's NewClients is not set (eks.NewClientsFactory)")
	}
	ref, data, err := access.LoadCredential(ctx, k, credentialField, spec.AmazonCredentialSecret)
	if err != nil {
		return nil, nil, err
	}
	cs, err := newClients(ctx, spec.Region, data)
	if err != nil {
		return nil, nil, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	return cs, data, nil
}

// credentialField is the spec field naming the credential Secret.
const credentialField = "spec.amazonCredentialSecret"

// awsConfig is the SDK configuration for region with the static
// credentials of the credential Secret's data; a missing key is an error
// naming both keys.
func awsConfig(region string, secret map[string][]byte) (aws.Config, error) {
	ak, sk := string(secret[AccessKeyField]), string(secret[SecretKeyField])
	if ak == "" || sk == "" {
		return aws.Config{}, fmt.Errorf("credential secret: keys %s and %s are required", AccessKeyField, SecretKeyField)
	}
	return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(ak, sk, "")}, nil
}

// ClientsFactory makes the EKS, CloudFormation and EC2 clients for a
// region from the credential Secret's data (keys AccessKeyField and
// SecretKeyField; a missing key is an error).
type ClientsFactory func(ctx context.Context, region string, secret map[string][]byte) (*Clients, error)

// NewClientsFactory returns a ClientsFactory that builds aws-sdk-go-v2
// clients with the Secret's static credentials. endpoint "" means the real
// AWS endpoints of the region; otherwise every service is sent to that one
// base URL (the ekstest emulator serves EKS, CloudFormation and EC2 at the
// same URL). configure, if given, adjusts the SDK configuration of all
// three clients, e.g. RetryMaxAttempts.
func NewClientsFactory(endpoint string, configure ...func(*aws.Config)) ClientsFactory {
	return func(_ context.Context, region string, secret map[string][]byte) (*Clients, error) {
		cfg, err := awsConfig(region, secret)
		if err != nil {
			return nil, err
		}
		for _, c := range configure {
			c(&cfg)
		}
		var base *string
		if endpoint != "" {
			base = aws.String(endpoint)
		}
		return &Clients{
			EKS:            eks.NewFromConfig(cfg, func(o *eks.Options) { o.BaseEndpoint = base }),
			CloudFormation: cloudformation.NewFromConfig(cfg, func(o *cloudformation.Options) { o.BaseEndpoint = base }),
			EC2:            ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = base }),
		}, nil
	}
}

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
