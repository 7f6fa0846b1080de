package eks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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

// Reconciler drives EKSClusterConfig objects through their phases. This
// version creates clusters with given networking: "" → creating (after
// CreateCluster) → active (EKS reports ACTIVE; the CA Secret is written and
// the node groups are created), then applies spec changes one per pass
// (active ⇄ updating, update.go), and on deletion destroys what it created
// (delete.go; imported clusters carry no finalizer and are only
// disconnected). Existing clusters are imported without any write
// (import.go). Launch templates, add-ons and generated networking are not
// implemented yet and say so in status.failureMessage.
type Reconciler struct {
	// Client reads and writes the EKSClusterConfig objects and Secrets.
	Client client.Client
	// NewClient makes the EKS client from the credential Secret. It may be
	// nil when NewServices is set.
	NewClient ClientFactory
	// NewServices makes the EKS, CloudFormation and EC2 clients from the
	// credential Secret (NewServicesFactory); when set, its EKS client is
	// used instead of NewClient's. Without it, a cluster that needs
	// something generated (networking, roles, the managed launch template)
	// fails with a status.failureMessage naming this field.
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
		return r.delete(ctx, cs.EKS, &c)
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
		return r.create(ctx, api, &c)
	case eksv1.PhaseCreating:
		return r.waitActive(ctx, api, &c)
	case eksv1.PhaseActive, eksv1.PhaseUpdating:
		return r.update(ctx, api, &c)
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return DefaultPoll
}

// clients builds the AWS clients from the credential Secret: all of them
// with NewServices, else only EKS with NewClient.
func (r *Reconciler) clients(ctx context.Context, c *eksv1.EKSClusterConfig) (*Clients, error) {
	ref, err := ParseCredentialRef(c.Spec.AmazonCredentialSecret)
	if err != nil {
		return nil, err
	}
	var s corev1.Secret
	if err := r.Client.Get(ctx, ref, &s); err != nil {
		return nil, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	cs := &Clients{}
	if r.NewServices != nil {
		made, err := r.NewServices(ctx, c.Spec.Region, s.Data)
		if err != nil {
			return nil, err
		}
		*cs = *made
	}
	if cs.EKS == nil {
		if r.NewClient == nil {
			return nil, errors.New("the EKS operator has no EKS client: set Reconciler.NewServices (eks.NewServicesFactory) or Reconciler.NewClient")
		}
		if cs.EKS, err = r.NewClient(ctx, c.Spec.Region, s.Data); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// validateCreate returns what a cluster needs that this version cannot
// generate, naming the field.
func validateCreate(spec *eksv1.EKSClusterConfigSpec) error {
	var errs []error
	if spec.Subnets == nil || len(*spec.Subnets) == 0 {
		errs = append(errs, errors.New("spec.subnets: required (generating networking with CloudFormation is not implemented yet)"))
	}
	if spec.ServiceRole == nil || *spec.ServiceRole == "" {
		errs = append(errs, errors.New("spec.serviceRole: required (generating the service role is not implemented yet)"))
	}
	if spec.NodeGroups != nil {
		for _, ng := range *spec.NodeGroups {
			if ng.NodeRole == nil || *ng.NodeRole == "" {
				errs = append(errs, fmt.Errorf("spec.nodeGroups[%s].nodeRole: required (generating the node role is not implemented yet)", ng.NodegroupName))
			}
		}
	}
	return errors.Join(errs...)
}

// create checks the name is free in the region and creates the cluster.
func (r *Reconciler) create(ctx context.Context, api API, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	if err := validateCreate(&c.Spec); err != nil {
		return ctrl.Result{}, r.fail(ctx, c, err.Error())
	}
	_, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case err == nil:
		return ctrl.Result{}, r.fail(ctx, c, fmt.Sprintf("an EKS cluster named %s already exists in %s; set imported: true to manage it",
			c.Spec.DisplayName, c.Spec.Region))
	case !errors.As(err, &nf):
		return ctrl.Result{}, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	}
	// The finalizer goes on before the cluster exists, so that a delete
	// never leaves a cluster behind; imported clusters never get it.
	if controllerutil.AddFinalizer(c, Finalizer) {
		if err := r.Client.Update(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	if _, err := api.CreateCluster(ctx, CreateClusterInput(&c.Spec)); err != nil {
		return ctrl.Result{}, r.fail(ctx, c, "create cluster: "+err.Error())
	}
	c.Status.Phase, c.Status.FailureMessage, c.Status.NetworkFieldsSource = eksv1.PhaseCreating, "", "provided"
	return ctrl.Result{RequeueAfter: r.poll()}, r.Client.Status().Update(ctx, c)
}

// waitActive waits for EKS to report the cluster ACTIVE, then writes the CA
// Secret and creates the node groups.
func (r *Reconciler) waitActive(ctx context.Context, api API, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
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
	if err := r.createNodegroups(ctx, api, c, cl); err != nil {
		return ctrl.Result{}, err
	}
	return r.becomeActive(ctx, c, cl)
}

// becomeActive writes the CA Secret and the network status of an ACTIVE
// cluster and sets phase active.
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
	return ctrl.Result{}, r.Client.Status().Update(ctx, c)
}

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
// have yet.
func (r *Reconciler) createNodegroups(ctx context.Context, api API, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster) error {
	if c.Spec.NodeGroups == nil {
		return nil
	}
	list, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: cl.Name})
	if err != nil {
		return fmt.Errorf("list node groups of %s: %w", aws.ToString(cl.Name), err)
	}
	have := map[string]bool{}
	for _, n := range list.Nodegroups {
		have[n] = true
	}
	var subnets []string
	if cl.ResourcesVpcConfig != nil {
		subnets = cl.ResourcesVpcConfig.SubnetIds
	}
	for i := range *c.Spec.NodeGroups {
		ng := &(*c.Spec.NodeGroups)[i]
		if have[ng.NodegroupName] {
			continue
		}
		var inUse *ekstypes.ResourceInUseException
		if _, err := api.CreateNodegroup(ctx, CreateNodegroupInput(aws.ToString(cl.Name), ng, aws.ToString(ng.NodeRole), subnets)); err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create node group %s: %w", ng.NodegroupName, err)
		}
	}
	return nil
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
