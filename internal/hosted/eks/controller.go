package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// Provider is the EKS operator's calls (engine.Provider): the engine
// (internal/hosted/engine) drives EKSClusterConfig objects through their
// phases with it and Traits, as Rancher's eks-operator does: ""
// (generating what the spec leaves empty — the VPC, service role and node
// role CloudFormation stacks, stacks.go — then CreateCluster) → creating →
// active (EKS reports ACTIVE; the CA Secret is written and the node groups
// are created, those without a launchTemplate on the managed launch
// template, launchtemplate.go), then applies spec changes one call per
// pass (active ⇄ updating, update.go), and on deletion destroys what it
// created (imported clusters carry no finalizer and are only
// disconnected). Existing clusters are imported without any write.
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

// Import connects an existing EKS cluster without changing it: it waits
// until EKS reports it ACTIVE, then records its endpoint, CA and network.
// Its nil spec fields stay unmanaged; the update pass pushes only what the
// user sets later
// (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters: a registered cluster starts
// with every nillable field nil).
func (s *conn) Import(ctx context.Context) (bool, error) {
	c := s.c
	out, err := s.cs.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return false, engine.Fail(fmt.Errorf("spec.displayName: no EKS cluster named %s in %s to import", c.Spec.DisplayName, c.Spec.Region))
	case err != nil:
		return false, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	case out.Cluster.Status != ekstypes.ClusterStatusActive:
		return false, nil
	}
	c.Status.NetworkFieldsSource = eksv1.NetworkFieldsProvided
	return true, s.r.becomeActive(ctx, c, out.Cluster)
}

// Delete destroys a cluster clustersync created, in Rancher's eks-operator
// order (https://github.com/rancher/eks-operator): its node groups, then the
// managed launch template, then the cluster, then the generated
// CloudFormation stacks — node role, service role, VPC — one at a time,
// each waited for (the VPC's subnets cannot go while the cluster uses
// them). Every step is polled across passes; the finalizer is removed once
// all is gone. Only stacks and templates carrying this config's
// OwnerUIDTag are deleted.
func (s *conn) Delete(ctx context.Context) (bool, error) {
	c, cs, api := s.c, s.cs, s.cs.EKS
	name := aws.String(c.Spec.DisplayName)
	var nf *ekstypes.ResourceNotFoundException
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: name})
	switch {
	case errors.As(err, &nf): // the cluster is gone (or was never created)
	case err != nil:
		return false, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	case aws.ToString(out.Cluster.ClientRequestToken) != string(c.UID):
		// Someone else's cluster of that name (taken while this object's
		// create was refused): never deleted.
	case out.Cluster.Status == ekstypes.ClusterStatusDeleting:
		return false, nil
	default:
		return false, s.r.deleteCluster(ctx, cs, c)
	}
	if err := s.r.deleteManagedTemplate(ctx, cs, c); err != nil {
		return false, engine.Fail(err)
	}
	for _, k := range []stackKind{nodeRoleStack, serviceRoleStack, vpcStack} {
		done, err := s.r.deleteStack(ctx, cs, c, k)
		if err != nil || !done {
			return false, engine.Fail(err)
		}
	}
	return true, nil
}

// deleteCluster deletes the node groups of an existing cluster and, once
// they are gone, the managed launch template and the cluster.
func (r *Provider) deleteCluster(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) error {
	api := cs.EKS
	name := aws.String(c.Spec.DisplayName)
	var nf *ekstypes.ResourceNotFoundException
	var inUse *ekstypes.ResourceInUseException
	list, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: name})
	if err != nil {
		return fmt.Errorf("list node groups of %s: %w", c.Spec.DisplayName, err)
	}
	if len(list.Nodegroups) > 0 {
		for _, ng := range list.Nodegroups {
			_, err := api.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: name, NodegroupName: aws.String(ng)})
			if err != nil && !errors.As(err, &nf) && !errors.As(err, &inUse) {
				return fmt.Errorf("delete node group %s: %w", ng, err)
			}
		}
		return nil
	}
	if err := r.deleteManagedTemplate(ctx, cs, c); err != nil {
		return engine.Fail(err)
	}
	if _, err := api.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: name}); err != nil && !errors.As(err, &nf) && !errors.As(err, &inUse) {
		return fmt.Errorf("delete cluster %s: %w", c.Spec.DisplayName, err)
	}
	return nil
}

// deleteManagedTemplate deletes the managed launch template: the one in
// status.managedLaunchTemplateID, or, when that is empty, the one of its
// name if it carries this config's owner tag (created by a pass whose
// status write was lost). An already deleted template is success.
func (r *Provider) deleteManagedTemplate(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) error {
	id := c.Status.ManagedLaunchTemplateID
	if cs.EC2 == nil {
		if id != "" {
			return errNoServices("deleting the managed launch template " + id)
		}
		return nil // nothing can have been created without EC2
	}
	if id == "" {
		var err error
		if id, err = r.ownedTemplateID(ctx, cs.EC2, c, ManagedLaunchTemplateName(c.Spec.DisplayName)); err != nil || id == "" {
			return err
		}
	}
	_, err := cs.EC2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)})
	if err != nil && ec2Code(err) != "InvalidLaunchTemplateId.NotFound" {
		return fmt.Errorf("delete launch template %s: %w", id, err)
	}
	c.Status.ManagedLaunchTemplateID, c.Status.ManagedLaunchTemplateVersions, c.Status.TemplateVersionsToDelete = "", nil, nil
	return r.Client.Status().Update(ctx, c)
}

// deleteStack deletes the generated stack of kind k if it exists and is
// this config's; done is true once it is gone. A stack whose deletion
// failed (DELETE_FAILED, e.g. a subnet still in use) is deleted again on
// the next pass, its reason in failureMessage.
func (r *Provider) deleteStack(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, k stackKind) (done bool, err error) {
	if cs.CloudFormation == nil {
		if mayHaveStacks(c) {
			return false, errNoServices("deleting the generated CloudFormation stacks")
		}
		return true, nil
	}
	name := k.name(c)
	st, err := describeStack(ctx, cs.CloudFormation, name)
	switch {
	case err != nil:
		return false, err
	case st == nil || !ownedStack(st, c):
		return true, nil
	case st.StackStatus == cfntypes.StackStatusDeleteInProgress:
		return false, nil
	case st.StackStatus == cfntypes.StackStatusDeleteFailed:
		if err := engine.RecordFailure(ctx, r.Client, c, (&stackFailedError{name: name, status: string(st.StackStatus), reason: aws.ToString(st.StackStatusReason)}).Error()+" (deleting it again)"); err != nil {
			return false, err
		}
	}
	if _, err := cs.CloudFormation.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: st.StackId}); err != nil {
		return false, fmt.Errorf("delete stack %s: %w", name, err)
	}
	return false, nil
}

// mayHaveStacks reports whether the operator may have generated stacks
// for c: generated networking or node role in the status, or no service
// role in the spec.
func mayHaveStacks(c *eksv1.EKSClusterConfig) bool {
	return c.Status.NetworkFieldsSource == eksv1.NetworkFieldsGenerated || c.Status.GeneratedNodeRole != "" ||
		len(needStacks(&c.Spec)) > 0
}
