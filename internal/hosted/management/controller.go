// Package management is the management controller of hosted clusters: for
// each Cluster with spec.eksConfig it keeps an EKSClusterConfig for the EKS
// operator, refreshes status.eksStatus.upstreamSpec from the cloud every
// refresh period, and applies the managed-field semantics of
// shared/reference/000_f1d678c8b02d83db.txt without its race window
// (package managed): outside changes are adopted into the config and
// reported as events, user changes go to the operator, and a field changed
// on both sides raises condition Conflict and is not written.
package management

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	corev1 "k8s.io/api/core/v1"
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
	// NewEKS makes EKS clients, as for the operator.
	NewEKS eks.ClientFactory
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

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c mgmtv1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.Spec.EKSConfig == nil || c.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	var op eksv1.EKSClusterConfig
	opKey := types.NamespacedName{Namespace: eksv1.Namespace, Name: c.Name}
	opExists := r.Client.Get(ctx, opKey, &op) == nil

	config := *c.Spec.EKSConfig
	opSpec := config
	up, found, err := r.upstream(ctx, &config)
	if err != nil {
		return ctrl.Result{}, err
	}
	if c.Status.EKSStatus == nil {
		c.Status.EKSStatus = &mgmtv1.EKSStatus{}
	}
	if found {
		c.Status.EKSStatus.UpstreamSpec = &up
		if up.KubernetesVersion != nil {
			c.Status.Version = *up.KubernetesVersion
		}
	}
	// While the operator is changing the cluster, upstream is in flux: only
	// record it (Rancher skips the spec sync then too).
	if found && opExists && op.Status.Phase == eksv1.PhaseActive {
		var applied eksv1.EKSClusterConfigSpec
		if c.Status.AppliedSpec != nil {
			applied = *c.Status.AppliedSpec
		}
		// Identity fields are never synced; they are the config's everywhere.
		applied.DisplayName, applied.Region = config.DisplayName, config.Region
		applied.AmazonCredentialSecret, applied.Imported = config.AmazonCredentialSecret, config.Imported
		plan := managed.Reconcile(config, up, applied, eks.ManagedOptions())
		if len(plan.Adopt) > 0 {
			c.Spec.EKSConfig = &plan.Config
			status := c.Status
			if err := r.Client.Update(ctx, &c); err != nil {
				return ctrl.Result{}, err
			}
			c.Status = status
			for _, a := range plan.Adopt {
				r.Events.Eventf(&c, nil, corev1.EventTypeNormal, "OutsideChange", "Sync",
					"%s changed outside clustersync from %s to %s; adopted into spec.eksConfig", a.Path, show(a.Old), show(a.New))
			}
		}
		opSpec = plan.Config
		var paths []string
		for _, cf := range plan.Conflicts {
			if err := managed.CopyPath(&opSpec, up, cf.Path, eks.ManagedOptions()); err != nil {
				return ctrl.Result{}, err
			}
			paths = append(paths, fmt.Sprintf("%s (config %s, upstream %s, last applied %s)", cf.Path, show(cf.Config), show(cf.Upstream), show(cf.Applied)))
		}
		setConflict(&c, paths)
		c.Status.AppliedSpec = &plan.Applied
	}
	if err := r.ensureOperatorConfig(ctx, &c, opSpec); err != nil {
		return ctrl.Result{}, err
	}
	c.Status.Driver = mgmtv1.DriverEKS
	c.Status.Phase = phaseOf(op.Status.Phase, opExists)
	return ctrl.Result{RequeueAfter: r.refresh()}, r.Client.Status().Update(ctx, &c)
}

// upstream describes the cluster in EKS; found is false before it exists.
func (r *Reconciler) upstream(ctx context.Context, config *eksv1.EKSClusterConfigSpec) (eksv1.EKSClusterConfigSpec, bool, error) {
	ref, err := eks.ParseCredentialRef(config.AmazonCredentialSecret)
	if err != nil {
		return eksv1.EKSClusterConfigSpec{}, false, err
	}
	var s corev1.Secret
	if err := r.Client.Get(ctx, ref, &s); err != nil {
		return eksv1.EKSClusterConfigSpec{}, false, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	api, err := r.NewEKS(ctx, config.Region, s.Data)
	if err != nil {
		return eksv1.EKSClusterConfigSpec{}, false, err
	}
	cl, ngs, err := eks.Describe(ctx, api, config.DisplayName)
	var nf *ekstypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return eksv1.EKSClusterConfigSpec{}, false, nil
	}
	if err != nil {
		return eksv1.EKSClusterConfigSpec{}, false, err
	}
	return eks.UpstreamSpec(*config, cl, ngs, false), true, nil
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

func setConflict(c *mgmtv1.Cluster, paths []string) {
	cond := metav1.Condition{Type: mgmtv1.ConditionConflict, Status: metav1.ConditionFalse, Reason: "NoConflict",
		Message: "no field was changed both in clustersync and outside it", ObservedGeneration: c.Generation}
	if len(paths) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, "ChangedOnBothSides"
		cond.Message = "changed both in clustersync and outside it since last applied; not written until spec.eksConfig is edited: " + strings.Join(paths, "; ")
	}
	meta.SetStatusCondition(&c.Status.Conditions, cond)
}

// phaseOf maps the operator's phase to the Cluster's.
func phaseOf(op string, exists bool) string {
	switch {
	case !exists || op == "":
		return mgmtv1.PhasePending
	case op == eksv1.PhaseCreating || op == eksv1.PhaseImporting:
		return mgmtv1.PhaseProvisioning
	case op == eksv1.PhaseUpdating:
		return mgmtv1.PhaseUpdating
	case op == eksv1.PhaseDeleting:
		return mgmtv1.PhaseDeleting
	}
	return mgmtv1.PhaseActive
}

func show(v any) string {
	if v == nil {
		return "(unset)"
	}
	return fmt.Sprintf("%v", v)
}
