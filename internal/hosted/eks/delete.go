package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// delete destroys a cluster clustersync created, as Rancher's eks-operator
// does: its node groups first, then the cluster; the finalizer is removed
// once EKS no longer knows the cluster. (Generated CloudFormation stacks and
// launch templates will be removed here too once they are generated.)
func (r *Reconciler) delete(ctx context.Context, api API, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	if c.Status.Phase != eksv1.PhaseDeleting {
		c.Status.Phase = eksv1.PhaseDeleting
		if err := r.Client.Status().Update(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	name := aws.String(c.Spec.DisplayName)
	var nf *ekstypes.ResourceNotFoundException
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: name})
	switch {
	case errors.As(err, &nf):
		controllerutil.RemoveFinalizer(c, Finalizer)
		return ctrl.Result{}, r.Client.Update(ctx, c)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	case out.Cluster.Status == ekstypes.ClusterStatusDeleting:
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	list, err := api.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: name})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("list node groups of %s: %w", c.Spec.DisplayName, err)
	}
	if len(list.Nodegroups) > 0 {
		for _, ng := range list.Nodegroups {
			_, err := api.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: name, NodegroupName: aws.String(ng)})
			var inUse *ekstypes.ResourceInUseException
			if err != nil && !errors.As(err, &nf) && !errors.As(err, &inUse) {
				return ctrl.Result{}, fmt.Errorf("delete node group %s: %w", ng, err)
			}
		}
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	if _, err := api.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: name}); err != nil && !errors.As(err, &nf) {
		var inUse *ekstypes.ResourceInUseException
		if errors.As(err, &inUse) {
			return ctrl.Result{RequeueAfter: r.poll()}, nil
		}
		return ctrl.Result{}, fmt.Errorf("delete cluster %s: %w", c.Spec.DisplayName, err)
	}
	return ctrl.Result{RequeueAfter: r.poll()}, nil
}
