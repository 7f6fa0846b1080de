package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Finalizer holds back the deletion of an EKSClusterConfig whose cluster
// clustersync created until the cluster and its node groups are gone.
const Finalizer = "eks.clustersync.io/cleanup"

// Provider is the EKS operator's calls (engine.Provider): the engine
// (internal/hosted/engine) drives EKSClusterConfig objects through their
// phases with it and Traits, as Rancher's eks-operator does: ""
// (generating what the spec leaves empty — the VPC, service role and node
// role CloudFormation stacks, stacks.go — then CreateCluster) → creating →
// active (EKS reports ACTIVE; the CA Secret is written and the node groups
// are created, those without a launchTemplate on the managed launch
// template, launchtemplate.go), then applies spec changes one call per
// pass (active ⇄ updating, update.go), and on deletion destroys what it
// created (delete.go; imported clusters carry no finalizer and are only
// disconnected). Existing clusters are imported without any write
// (import.go).
type Provider struct {
	// Client reads and writes the EKSClusterConfig objects and Secrets.
	Client client.Client
	// NewClients makes the EKS, CloudFormation and EC2 clients from the
	// credential Secret (NewClientsFactory); required. A factory that
	// leaves CloudFormation or EC2 nil fails clusters that need something
	// generated (networking, roles, the managed launch template) with a
	// status.failureMessage saying so.
	NewClients ClientsFactory
}

var _ engine.Provider[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig] = (*Provider)(nil)

// Open builds the AWS clients from the credential Secret.
func (p *Provider) Open(ctx context.Context, c *eksv1.EKSClusterConfig) (engine.Session[eksv1.EKSClusterConfigSpec], error) {
	cs, _, err := LoadClients(ctx, p.Client, p.NewClients, c.Spec)
	if err != nil {
		return nil, err
	}
	return &conn{r: p, cs: cs, c: c}, nil
}

// vet leaves out the fields EKS cannot change after creation (Immutable)
// and the changes there is nothing to send for (ignored).
func vet(spec eksv1.EKSClusterConfigSpec, ch managed.Change) (bool, error) {
	return !Immutable(ch) && !ignored(&spec, ch), nil
}

// conn is one EKSClusterConfig's connection to EKS for one pass (engine.Session).
type conn struct {
	r  *Provider
	cs *Clients
	c  *eksv1.EKSClusterConfig
	// cl is the cluster as the last describe of this pass found it.
	cl *ekstypes.Cluster
}

// Create checks the name is free in the region, generates what the spec
// leaves empty (the VPC, service role and node role stacks, created in
// parallel and waited for across passes) and calls CreateCluster, whose
// client request token (the config's UID) tells a cluster an earlier pass
// created from someone else's.
func (s *conn) Create(ctx context.Context, claim func(context.Context) error) (bool, error) {
	c, api := s.c, s.cs.EKS
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	var nf *ekstypes.ResourceNotFoundException
	ours := false
	switch {
	case err == nil && aws.ToString(out.Cluster.ClientRequestToken) == string(c.UID):
		ours = true // created by an earlier pass whose status write was lost
	case err == nil:
		return false, engine.Fail(fmt.Errorf("an EKS cluster named %s already exists in %s; set imported: true to manage it",
			c.Spec.DisplayName, c.Spec.Region))
	case !errors.As(err, &nf):
		return false, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	}
	if err := claim(ctx); err != nil {
		return false, err
	}
	g, done, err := generate(ctx, s.cs, c)
	if err != nil || !done {
		return false, engine.Fail(err)
	}
	in := CreateClusterInput(&c.Spec)
	in.ClientRequestToken = aws.String(string(c.UID))
	c.Status.NetworkFieldsSource = eksv1.NetworkFieldsProvided
	if g.vpcID != "" {
		c.Status.NetworkFieldsSource = eksv1.NetworkFieldsGenerated
		c.Status.VirtualNetwork, c.Status.Subnets, c.Status.SecurityGroups = g.vpcID, g.subnets, g.securityGroups
		in.ResourcesVpcConfig.SubnetIds, in.ResourcesVpcConfig.SecurityGroupIds = g.subnets, g.securityGroups
	}
	if g.serviceRole != "" {
		in.RoleArn = aws.String(g.serviceRole)
	}
	if g.nodeRole != "" {
		c.Status.GeneratedNodeRole = g.nodeRole
	}
	if !ours {
		if _, err := api.CreateCluster(ctx, in); err != nil {
			return false, engine.Fail(fmt.Errorf("create cluster: %w", err))
		}
	}
	return true, nil
}

// Provision waits for EKS to report the cluster ACTIVE, creates the node
// groups, then writes the CA Secret and the network status.
func (s *conn) Provision(ctx context.Context) (bool, error) {
	c := s.c
	out, err := s.cs.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	if err != nil {
		return false, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	}
	cl := out.Cluster
	switch cl.Status {
	case ekstypes.ClusterStatusActive:
	case ekstypes.ClusterStatusFailed:
		return false, engine.Fail(errors.New("EKS reports the cluster FAILED"))
	default:
		return false, nil
	}
	done, err := s.r.createNodegroups(ctx, s.cs, c, cl)
	if err != nil || !done {
		return false, engine.Fail(err) // the node groups created so far are applied
	}
	return true, s.r.becomeActive(ctx, c, cl)
}

// becomeActive writes the CA Secret and the network status of an ACTIVE
// cluster.
func (r *Provider) becomeActive(ctx context.Context, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) error {
	if err := r.writeCASecret(ctx, c, cl); err != nil {
		return err
	}
	if v := cl.ResourcesVpcConfig; v != nil {
		c.Status.VirtualNetwork = aws.ToString(v.VpcId)
		c.Status.Subnets = v.SubnetIds
		c.Status.SecurityGroups = v.SecurityGroupIds
	}
	return nil
}

// writeCASecret stores the API endpoint and CA of the cluster in a Secret
// named like the config, beside it, owned by it (Rancher's "ca" secret).
func (r *Provider) writeCASecret(ctx context.Context, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, s, func() error {
		s.StringData = nil
		s.Data = map[string][]byte{"endpoint": []byte(aws.ToString(cl.Endpoint))}
		if cl.CertificateAuthority != nil {
			s.Data["ca"] = []byte(aws.ToString(cl.CertificateAuthority.Data))
		}
		return controllerutil.SetControllerReference(c, s, r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("CA secret %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}

// createNodegroups creates every node group of the spec that EKS does not
// have yet; done is false when one waits for a generated resource.
func (r *Provider) createNodegroups(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) (done bool, err error) {
	if c.Spec.NodeGroups == nil {
		return true, nil
	}
	api := cs.EKS
	list, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: cl.Name})
	if err != nil {
		return false, fmt.Errorf("list node groups of %s: %w", aws.ToString(cl.Name), err)
	}
	have := map[string]bool{}
	for _, n := range list.Nodegroups {
		have[n] = true
	}
	done = true
	for i := range *c.Spec.NodeGroups {
		ng := &(*c.Spec.NodeGroups)[i]
		if have[ng.NodegroupName] {
			continue
		}
		ok, err := r.createNodegroup(ctx, cs, c, cl, ng)
		if err != nil {
			return false, err
		}
		if ok {
			if err := markCreated(c, ng.NodegroupName); err != nil {
				return false, err
			}
		}
		done = done && ok
	}
	return done, nil
}

// createNodegroup creates one node group. A node group without nodeRole
// gets status.generatedNodeRole, whose stack is generated first if need be
// (done is false while it is being created); one without launchTemplate
// gets its own version of the managed launch template. ResourceInUseException
// is success when the node group exists (an earlier call got through).
func (r *Provider) createNodegroup(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster, ng *eksv1.NodeGroup) (done bool, err error) {
	role := aws.ToString(ng.NodeRole)
	if role == "" {
		if role, done, err = r.generatedNodeRole(ctx, cs, c); !done || err != nil {
			return done, err
		}
	}
	var subnets []string
	if cl.ResourcesVpcConfig != nil {
		subnets = cl.ResourcesVpcConfig.SubnetIds
	}
	var managed *ekstypes.LaunchTemplateSpecification
	if ng.LaunchTemplate == nil {
		if managed, err = r.templateVersion(ctx, cs, c, ng, templateFields{}); err != nil {
			return false, err
		}
	}
	_, err = cs.EKS.CreateNodegroup(ctx, CreateNodegroupInput(aws.ToString(cl.Name), ng, role, subnets, managed))
	var inUse *ekstypes.ResourceInUseException
	if errors.As(err, &inUse) {
		// Success if the node group exists (an earlier call got
		// through); otherwise EKS is busy and the call is retried.
		if _, derr := cs.EKS.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: cl.Name, NodegroupName: aws.String(ng.NodegroupName)}); derr == nil {
			return true, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("create node group %s: %w", ng.NodegroupName, err)
	}
	return true, nil
}

// generatedNodeRole returns status.generatedNodeRole, generating the node
// role stack first when it is empty; done is false while the stack is
// being created.
func (r *Provider) generatedNodeRole(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (role string, done bool, err error) {
	if c.Status.GeneratedNodeRole != "" {
		return c.Status.GeneratedNodeRole, true, nil
	}
	if cs.CloudFormation == nil {
		return "", false, errNoServices("generating the node role (a node group has no nodeRole)")
	}
	out, done, err := ensureStack(ctx, cs.CloudFormation, c, nodeRoleStack)
	if !done || err != nil {
		return "", done, err
	}
	c.Status.GeneratedNodeRole = out["NodeInstanceRole"]
	if err := r.Client.Status().Update(ctx, c); err != nil {
		return "", false, err
	}
	return c.Status.GeneratedNodeRole, true, nil
}

// Retryable reports whether err is a transient AWS error, retried on a
// later pass without losing the change: throttling (ThrottlingException,
// Throttling, RequestLimitExceeded... — the SDK's own retries gave up),
// server errors and broken connections (the SDK's Retryable errors), and
// ResourceInUseException (EKS is busy with another change of the cluster
// or node group).
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	var inUse *ekstypes.ResourceInUseException
	if errors.As(err, &inUse) {
		return true
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}
