// Package management is the management controller of hosted clusters: for
// each Cluster with spec.eksConfig it keeps an EKSClusterConfig for the EKS
// operator, refreshes status.eksStatus.upstreamSpec from the cloud every
// refresh period, and applies the managed-field semantics of
// https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters without its race window
// (package managed): outside changes are adopted into the config and
// reported as events, user changes go to the operator, and a field changed
// on both sides raises condition Conflict and is not written.
package management

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// DefaultRefresh is how often the upstream spec is refreshed (Rancher's
// eks-refresh setting, 300 seconds).
const DefaultRefresh = 300 * time.Second

// Reconciler is the management controller for EKS clusters.
type Reconciler struct {
	Client client.Client
	// NewServices makes the AWS clients from a credential Secret, as for
	// the operator (eks.NewServicesFactory); required.
	NewServices eks.ServicesFactory
	// Tokens makes the bearer token for a cluster's API server; nil means
	// an aws-iam-authenticator token (eks.IAMToken) from the credential
	// Secret.
	Tokens TokenFunc
	// Dial opens connections for the private-endpoint check
	// (eks.RequiresTunnel); nil means a net.Dialer.
	Dial eks.DialFunc
	// DialTimeout bounds that check; 0 means eks.EndpointDialTimeout (30
	// seconds).
	DialTimeout time.Duration
	// APIReader reads the operator's EKSClusterConfig past the cache to
	// confirm an adoption (the manager's GetAPIReader); nil means Client.
	APIReader client.Reader
	// Events records OutsideChange events on Clusters.
	Events events.EventRecorder
	// Refresh is the upstream refresh period; 0 means DefaultRefresh.
	Refresh time.Duration
}

func (r *Reconciler) refresh() time.Duration {
	if r.Refresh > 0 {
		return r.Refresh
	}
	return DefaultRefresh
}

// Finalizer holds back the deletion of a Cluster until its
// EKSClusterConfig is gone, i.e. until the EKS operator destroyed what it
// created (or, for an imported cluster, just let go of it).
const Finalizer = "management.clustersync.io/cleanup"

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c mgmtv1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.Spec.EKSConfig == nil {
		return ctrl.Result{}, nil
	}
	if c.DeletionTimestamp != nil {
		return r.finalize(ctx, &c)
	}
	if controllerutil.AddFinalizer(&c, Finalizer) {
		if err := r.Client.Update(ctx, &c); err != nil {
			return ctrl.Result{}, err
		}
	}
	var op eksv1.EKSClusterConfig
	opKey := types.NamespacedName{Namespace: eksv1.Namespace, Name: c.Name}
	opExists := r.Client.Get(ctx, opKey, &op) == nil

	config := *c.Spec.EKSConfig
	opSpec := config
	up, found, err := r.upstream(ctx, &config, op.Status)
	if err != nil {
		return ctrl.Result{}, err
	}
	if c.Status.EKSStatus == nil {
		c.Status.EKSStatus = &mgmtv1.EKSStatus{}
	}
	obs := observed{}
	if opExists {
		obs.op = &op
		copyOperatorStatus(c.Status.EKSStatus, &op.Status)
		c.Status.AppliedSpec = op.Status.AppliedSpec.DeepCopy()
		for _, cf := range op.Status.Conflicts {
			obs.conflicts = append(obs.conflicts, fmt.Sprintf("%s (config %s, upstream %s, last applied %s)", cf.Path, cf.Config, cf.Upstream, cf.Applied))
		}
	}
	if found {
		c.Status.EKSStatus.UpstreamSpec = &up.spec
		obs.upstream = &up.spec
		if up.spec.KubernetesVersion != nil {
			c.Status.Version = *up.spec.KubernetesVersion
		}
		c.Status.APIEndpoint, c.Status.CACert = up.endpoint, up.caCert
	}
	// Outside changes are adopted only while the operator's record is
	// settled (active, no push pending); the operator itself decides what
	// to push and what is in conflict, on what EKS reports when it pushes.
	if found && opExists {
		adopted, err := r.adopt(ctx, &c, &op, config, up.spec)
		if err != nil {
			return ctrl.Result{}, err
		}
		if adopted != nil {
			opSpec = *adopted
		}
	}
	if found && opExists && (op.Status.Phase == eksv1.PhaseActive || op.Status.Phase == eksv1.PhaseUpdating) {
		obs.access = r.reach(ctx, &c, &config, up)
	}
	if err := r.ensureOperatorConfig(ctx, &c, opSpec); err != nil {
		return ctrl.Result{}, err
	}
	c.Status.Driver = mgmtv1.DriverEKS
	c.Status.ObservedGeneration = c.Generation
	setConditions(&c, obs)
	if err := r.Client.Status().Update(ctx, &c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.refresh()}, nil
}

// adopt takes the outside changes upstream shows into c's spec.eksConfig
// (config) and reports each as an OutsideChange event naming the field, the
// old and the new value; it returns the new config, nil when nothing was
// adopted. op is the operator's object as read before upstream was
// described; an adoption is confirmed on op read again, past the cache
// (APIReader): the operator records a push before sending it to EKS, so a
// value EKS showed is then either on record or really someone else's.
func (r *Reconciler) adopt(ctx context.Context, c *mgmtv1.Cluster, op *eksv1.EKSClusterConfig, config, upstream eksv1.EKSClusterConfigSpec) (*eksv1.EKSClusterConfigSpec, error) {
	plan, ready, err := r.plan(op, config, upstream)
	if err != nil || !ready || len(plan.Adopt) == 0 {
		return nil, err
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	var current eksv1.EKSClusterConfig
	if err := reader.Get(ctx, client.ObjectKeyFromObject(op), &current); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if plan, ready, err = r.plan(&current, config, upstream); err != nil || !ready || len(plan.Adopt) == 0 {
		return nil, err
	}
	c.Spec.EKSConfig = &plan.Config
	status := c.Status
	if err := r.Client.Update(ctx, c); err != nil {
		return nil, err
	}
	c.Status = status
	for _, a := range plan.Adopt {
		r.Events.Eventf(c, nil, corev1.EventTypeNormal, "OutsideChange", "Sync",
			"%s changed outside clustersync from %s to %s; adopted into spec.eksConfig", a.Path, show(a.Old), show(a.New))
	}
	return &plan.Config, nil
}

// plan compares config and upstream with op's applied record; ready is
// false while that record is not settled (eks.AppliedFor).
func (r *Reconciler) plan(op *eksv1.EKSClusterConfig, config, upstream eksv1.EKSClusterConfigSpec) (managed.Plan[eksv1.EKSClusterConfigSpec], bool, error) {
	applied, ready, err := eks.AppliedFor(op, config)
	if err != nil || !ready {
		return managed.Plan[eksv1.EKSClusterConfigSpec]{}, false, err
	}
	return managed.Reconcile(config, upstream, applied, eks.ManagedOptions()), true, nil
}

// finalize deletes the Cluster's EKSClusterConfig, reports phase Deleting
// while the operator cleans up, and lets the Cluster go once it is gone.
func (r *Reconciler) finalize(ctx context.Context, c *mgmtv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, Finalizer) {
		return ctrl.Result{}, nil
	}
	var op eksv1.EKSClusterConfig
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: eksv1.Namespace, Name: c.Name}, &op)
	switch {
	case apierrors.IsNotFound(err):
		controllerutil.RemoveFinalizer(c, Finalizer)
		return ctrl.Result{}, r.Client.Update(ctx, c)
	case err != nil:
		return ctrl.Result{}, err
	}
	if op.DeletionTimestamp == nil {
		if err := r.Client.Delete(ctx, &op); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	msg := "the EKS operator is deleting the cluster in EKS"
	if c.Spec.EKSConfig.Imported {
		msg = "disconnecting the imported cluster; EKS is not changed"
	}
	if op.Status.FailureMessage != "" {
		msg += ": " + op.Status.FailureMessage
	}
	if c.Status.Phase != mgmtv1.PhaseDeleting || !meta.IsStatusConditionFalse(c.Status.Conditions, mgmtv1.ConditionReady) {
		c.Status.Phase = mgmtv1.PhaseDeleting
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: mgmtv1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: "Deleting", Message: msg, ObservedGeneration: c.Generation})
		if err := r.Client.Status().Update(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The EKSClusterConfig's deletion wakes this controller (it is owned);
	// the requeue is a safety net.
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}

// copyOperatorStatus copies the cloud-side facts the operator keeps into
// the Cluster's eksStatus.
func copyOperatorStatus(dst *mgmtv1.EKSStatus, src *eksv1.EKSClusterConfigStatus) {
	dst.VirtualNetwork = src.VirtualNetwork
	dst.Subnets = src.Subnets
	dst.SecurityGroups = src.SecurityGroups
	dst.ManagedLaunchTemplateID = src.ManagedLaunchTemplateID
	dst.ManagedLaunchTemplateVersions = src.ManagedLaunchTemplateVersions
	dst.GeneratedNodeRole = src.GeneratedNodeRole
}

// upstreamState is what EKS reports of a cluster.
type upstreamState struct {
	// spec is the cluster as an EKSClusterConfigSpec (eks.UpstreamSpec).
	spec eksv1.EKSClusterConfigSpec
	// endpoint is the API server URL; caCert the base64 PEM of its CA.
	endpoint, caCert string
	// secret is the credential Secret's data.
	secret map[string][]byte
}

// upstream describes the cluster in EKS (eks.DescribeUpstream, which reads
// node groups on the operator's launch template from status); found is
// false before it exists.
func (r *Reconciler) upstream(ctx context.Context, config *eksv1.EKSClusterConfigSpec, status eksv1.EKSClusterConfigStatus) (upstreamState, bool, error) {
	cs, secret, err := eks.LoadClients(ctx, r.Client, r.NewServices, *config)
	if err != nil {
		return upstreamState{}, false, err
	}
	spec, cl, _, err := eks.DescribeUpstream(ctx, cs, *config, status)
	var nf *ekstypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return upstreamState{}, false, nil
	}
	if err != nil {
		return upstreamState{}, false, err
	}
	st := upstreamState{spec: spec, endpoint: aws.ToString(cl.Endpoint), secret: secret}
	if cl.CertificateAuthority != nil {
		st.caCert = aws.ToString(cl.CertificateAuthority.Data)
	}
	return st, true, nil
}

// ensureOperatorConfig keeps the EKSClusterConfig of c with spec, owned by c.
func (r *Reconciler) ensureOperatorConfig(ctx context.Context, c *mgmtv1.Cluster, spec eksv1.EKSClusterConfigSpec) error {
	op := &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: eksv1.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, op, func() error {
		op.Spec = spec
		return controllerutil.SetControllerReference(c, op, r.Client.Scheme())
	})
	return err
}

func show(v any) string {
	if v == nil {
		return "(unset)"
	}
	return fmt.Sprintf("%v", v)
}
