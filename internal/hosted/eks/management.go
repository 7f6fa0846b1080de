package eks

import (
	"context"
	"errors"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// TokenFunc returns a bearer token for the Kubernetes API of EKS cluster
// clusterName in region, signed with the credential Secret's data (secret).
type TokenFunc func(ctx context.Context, region string, secret map[string][]byte, clusterName string) (string, error)

// Management is EKS's reader for the management controller
// (management.Reader): EKS read with the management side's own AWS
// clients, and the cluster's API server reached
// with an aws-iam-authenticator token.
type Management struct {
	// Client reads the credential Secrets.
	Client client.Reader
	// NewClients makes the AWS clients from a credential Secret, as for
	// the operator (NewClientsFactory); required.
	NewClients ClientsFactory
	// Tokens makes the bearer token for a cluster's API server; nil means
	// an aws-iam-authenticator token (IAMToken) from the credential Secret.
	Tokens TokenFunc
	// Dial opens connections for the private-endpoint check
	// (access.RequiresTunnel); nil means a net.Dialer.
	Dial access.DialFunc
	// DialTimeout bounds that check; 0 means access.EndpointDialTimeout
	// (30 seconds).
	DialTimeout time.Duration
}

var _ management.Reader[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig] = (*Management)(nil)

// status returns status.eksStatus's upstreamSpec and appliedSpec
// (management.Traits.Status).
func status(c *mgmtv1.Cluster) (upstream, applied **eksv1.EKSClusterConfigSpec) {
	if c.Status.EKSStatus == nil {
		c.Status.EKSStatus = &mgmtv1.EKSStatus{}
	}
	return &c.Status.EKSStatus.UpstreamSpec, &c.Status.EKSStatus.AppliedSpec
}

// copyStatus copies the cloud-side facts the operator keeps into
// status.eksStatus (management.Traits.CopyStatus).
func copyStatus(c *mgmtv1.Cluster, op *eksv1.EKSClusterConfig) {
	status(c)
	dst, src := c.Status.EKSStatus, &op.Status
	dst.VirtualNetwork = src.VirtualNetwork
	dst.Subnets = src.Subnets
	dst.SecurityGroups = src.SecurityGroups
	dst.ManagedLaunchTemplateID = src.ManagedLaunchTemplateID
	dst.ManagedLaunchTemplateVersions = src.ManagedLaunchTemplateVersions
	dst.GeneratedNodeRole = src.GeneratedNodeRole
}

// nodePools counts the managed node groups (management.Traits.NodePools).
func nodePools(up eksv1.EKSClusterConfigSpec) int {
	if up.NodeGroups == nil {
		return 0
	}
	return len(*up.NodeGroups)
}

// Describe describes the cluster in EKS, its node groups and add-on
// (reading, as the operator's Observe does, with node groups on the
// operator's launch template read from op's status).
func (m *Management) Describe(ctx context.Context, config eksv1.EKSClusterConfigSpec, op *eksv1.EKSClusterConfig) (engine.Upstream[eksv1.EKSClusterConfigSpec], bool, error) {
	cs, _, err := LoadClients(ctx, m.Client, m.NewClients, config)
	if err != nil {
		return engine.Upstream[eksv1.EKSClusterConfigSpec]{}, false, err
	}
	var status eksv1.EKSClusterConfigStatus
	if op != nil {
		status = op.Status
	}
	cl, ngs, err := Describe(ctx, cs.EKS, config.DisplayName)
	var nf *ekstypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return engine.Upstream[eksv1.EKSClusterConfigSpec]{}, false, nil
	}
	if err != nil {
		return engine.Upstream[eksv1.EKSClusterConfigSpec]{}, false, err
	}
	up, err := reading(ctx, cs, config, status, cl, ngs)
	return up, err == nil, err
}

// Connect reaches the API server with an IAM token signed with the
// credential Secret's keys (Rancher's EKS driver,
// https://github.com/rancher/eks-operator). For an endpoint without public
// access it first tells whether the management server reaches it at all
// (access.RequiresTunnel, kept in status.eksStatus.privateRequiresTunnel).
func (m *Management) Connect(ctx context.Context, c *mgmtv1.Cluster, config eksv1.EKSClusterConfigSpec, up engine.Upstream[eksv1.EKSClusterConfigSpec]) (*rest.Config, error) {
	status(c)
	st := c.Status.EKSStatus
	if up.Spec.PublicAccess == nil || *up.Spec.PublicAccess {
		st.PrivateRequiresTunnel = nil
	} else {
		tunnel, err := management.PrivateEndpoint(ctx, m.Dial, m.DialTimeout, up.Endpoint, "status.eksStatus.privateRequiresTunnel")
		if tunnel != nil {
			st.PrivateRequiresTunnel = tunnel // undetermined keeps the last answer
		}
		if err != nil {
			return nil, err
		}
	}
	_, secret, err := access.LoadCredential(ctx, m.Client, credentialField, config.AmazonCredentialSecret)
	if err != nil {
		return nil, err
	}
	tokens := m.Tokens
	if tokens == nil {
		tokens = func(ctx context.Context, region string, secret map[string][]byte, name string) (string, error) {
			return IAMToken(ctx, region, secret, name, "")
		}
	}
	return access.RESTConfig(up.Endpoint, []byte(up.CACert), func(ctx context.Context) (string, error) {
		return tokens(ctx, config.Region, secret, config.DisplayName)
	})
}
