package eks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// Finalizer holds back the deletion of an EKSClusterConfig whose cluster
// clustersync created until the cluster and its node groups are gone.
const Finalizer = "eks.clustersync.io/cleanup"

// DefaultPoll is how often a cluster that is being created is described
// (Rancher's eks-operator: 30 seconds).
const DefaultPoll = 30 * time.Second

// Reconciler drives EKSClusterConfig objects through their phases, as
// Rancher's eks-operator does: "" (generating what the spec leaves empty —
// the VPC, service role and node role CloudFormation stacks, stacks.go —
// then CreateCluster) → creating → active (EKS reports ACTIVE; the CA
// Secret is written and the node groups are created, those without a
// launchTemplate on the managed launch template, launchtemplate.go), then
// applies spec
// changes one per pass (active ⇄ updating, update.go), and on deletion
// destroys what it created (delete.go; imported clusters carry no
// finalizer and are only disconnected). Existing clusters are imported
// without any write (import.go).
type Reconciler struct {
	// Client reads and writes the EKSClusterConfig objects and Secrets.
	Client client.Client
	// NewServices makes the EKS, CloudFormation and EC2 clients from the
	// credential Secret (NewServicesFactory); required. A factory that
	// leaves CloudFormation or EC2 nil fails clusters that need something
	// generated (networking, roles, the managed launch template) with a
	// status.failureMessage saying so.
	NewServices ServicesFactory
	// Poll is the describe interval while a cluster is being created; 0
	// means DefaultPoll.
	Poll time.Duration
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c eksv1.EKSClusterConfig
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		if !controllerutil.ContainsFinalizer(&c, Finalizer) {
			return ctrl.Result{}, nil // imported, or never created: nothing in the cloud to remove
		}
		cs, err := r.clients(ctx, &c)
		if err != nil {
			return ctrl.Result{}, r.fail(ctx, &c, err.Error())
		}
		return r.delete(ctx, cs, &c)
	}
	cs, err := r.clients(ctx, &c)
	if err != nil {
		return ctrl.Result{}, r.fail(ctx, &c, err.Error())
	}
	api := cs.EKS
	switch c.Status.Phase {
	case "", eksv1.PhaseImporting:
		if c.Spec.Imported {
			return r.importCluster(ctx, api, &c)
		}
		return r.create(ctx, cs, &c)
	case eksv1.PhaseCreating:
		return r.waitActive(ctx, cs, &c)
	case eksv1.PhaseActive, eksv1.PhaseUpdating:
		return r.update(ctx, cs, &c)
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return DefaultPoll
}

// clients builds the AWS clients from the credential Secret.
func (r *Reconciler) clients(ctx context.Context, c *eksv1.EKSClusterConfig) (*Clients, error) {
	cs, _, err := LoadClients(ctx, r.Client, r.NewServices, c.Spec)
	return cs, err
}

// create creates the cluster: it checks the name is free in the region,
// generates what the spec leaves empty (the VPC, service role and node role
// stacks, created in parallel and waited for across passes) and calls
// CreateCluster. Phase "" lasts until CreateCluster is sent.
func (r *Reconciler) create(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	api := cs.EKS
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	var nf *ekstypes.ResourceNotFoundException
	ours := false
	switch {
	case err == nil && aws.ToString(out.Cluster.ClientRequestToken) == string(c.UID):
		ours = true // created by an earlier pass whose status write was lost
	case err == nil:
		return ctrl.Result{}, r.fail(ctx, c, fmt.Sprintf("an EKS cluster named %s already exists in %s; set imported: true to manage it",
			c.Spec.DisplayName, c.Spec.Region))
	case !errors.As(err, &nf):
		return ctrl.Result{}, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	}
	// The finalizer goes on before anything exists, so that a delete never
	// leaves a stack or a cluster behind; imported clusters never get it.
	if controllerutil.AddFinalizer(c, Finalizer) {
		if err := r.Client.Update(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	g, done, err := generate(ctx, cs, c)
	if err != nil {
		return r.failOrRetry(ctx, c, err)
	}
	if !done {
		if c.Status.FailureMessage != "" {
			c.Status.FailureMessage = ""
			if err := r.Client.Status().Update(ctx, c); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: r.poll()}, nil
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
			return r.failOrRetry(ctx, c, fmt.Errorf("create cluster: %w", err))
		}
	}
	c.Status.Phase, c.Status.FailureMessage = eksv1.PhaseCreating, ""
	c.Status.AppliedSpec = createdApplied(c.Spec)
	return r.saveAndPoll(ctx, c)
}

// waitActive waits for EKS to report the cluster ACTIVE, then writes the CA
// Secret and creates the node groups.
func (r *Reconciler) waitActive(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	api := cs.EKS
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	}
	cl := out.Cluster
	switch cl.Status {
	case ekstypes.ClusterStatusActive:
	case ekstypes.ClusterStatusFailed:
		return ctrl.Result{}, r.fail(ctx, c, "EKS reports the cluster FAILED")
	default:
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	done, err := r.createNodegroups(ctx, cs, c, cl)
	if err != nil {
		return r.failOrRetry(ctx, c, err)
	}
	if !done {
		return r.saveAndPoll(ctx, c) // the node groups created so far are applied
	}
	return r.becomeActive(ctx, c, cl)
}

// becomeActive writes the CA Secret and the network status of an ACTIVE
// cluster and sets phase active. The first update pass follows at once:
// it records in status.appliedSpec every managed field EKS already agrees
// with, so that an outside change after that is told from a user change.
func (r *Reconciler) becomeActive(ctx context.Context, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) (ctrl.Result, error) {
	if err := r.writeCASecret(ctx, c, cl); err != nil {
		return ctrl.Result{}, err
	}
	if v := cl.ResourcesVpcConfig; v != nil {
		c.Status.VirtualNetwork = aws.ToString(v.VpcId)
		c.Status.Subnets = v.SubnetIds
		c.Status.SecurityGroups = v.SecurityGroupIds
	}
	c.Status.Phase, c.Status.FailureMessage = eksv1.PhaseActive, ""
	if err := r.Client.Status().Update(ctx, c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: firstPassDelay}, nil
}

// firstPassDelay is how soon the first update pass follows activation: long
// enough for the informer cache to hold the status just written.
const firstPassDelay = time.Second

// writeCASecret stores the API endpoint and CA of the cluster in a Secret
// named like the config, beside it, owned by it (Rancher's "ca" secret).
func (r *Reconciler) writeCASecret(ctx context.Context, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) error {
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
func (r *Reconciler) createNodegroups(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) (done bool, err error) {
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
func (r *Reconciler) createNodegroup(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster, ng *eksv1.NodeGroup) (done bool, err error) {
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
func (r *Reconciler) generatedNodeRole(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (role string, done bool, err error) {
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

// retryable reports whether err is a transient AWS error, retried on a
// later pass without losing the change: throttling (ThrottlingException,
// Throttling, RequestLimitExceeded... — the SDK's own retries gave up),
// server errors and broken connections (the SDK's retryable errors), and
// ResourceInUseException (EKS is busy with another change of the cluster
// or node group).
func retryable(err error) bool {
	if err == nil {
		return false
	}
	var inUse *ekstypes.ResourceInUseException
	if errors.As(err, &inUse) {
		return true
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// failOrRetry records err in status.failureMessage. A retryable error is
// returned as well, so that controller-runtime runs the pass again with its
// per-object exponential backoff (and the change is applied then); any
// other error waits for the spec to change.
func (r *Reconciler) failOrRetry(ctx context.Context, c *eksv1.EKSClusterConfig, err error) (ctrl.Result, error) {
	if !retryable(err) {
		return ctrl.Result{}, r.fail(ctx, c, err.Error())
	}
	if ferr := r.fail(ctx, c, err.Error()+" (retrying)"); ferr != nil {
		return ctrl.Result{}, ferr
	}
	return ctrl.Result{}, err
}

// fail records message in status.failureMessage (and keeps the phase).
func (r *Reconciler) fail(ctx context.Context, c *eksv1.EKSClusterConfig, message string) error {
	if c.Status.FailureMessage == message {
		return nil
	}
	c.Status.FailureMessage = message
	if err := r.Client.Status().Update(ctx, c); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// saveAndPoll writes c's status and asks to be called again after the
// poll interval (without the requeue when the write failed: the error
// requeues with backoff).
func (r *Reconciler) saveAndPoll(ctx context.Context, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	if err := r.Client.Status().Update(ctx, c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.poll()}, nil
}
