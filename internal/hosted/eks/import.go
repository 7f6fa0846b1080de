package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	ctrl "sigs.k8s.io/controller-runtime"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// importCluster connects an existing EKS cluster without changing it: it
// waits until EKS reports it ACTIVE, then records its endpoint, CA and
// network and becomes active. Its nil spec fields stay unmanaged; the
// update pass pushes only what the user sets later
// (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters: a registered cluster starts
// with every nillable field nil).
func (r *Reconciler) importCluster(ctx context.Context, api API, c *eksv1.EKSClusterConfig) (ctrl.Result, error) {
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.Spec.DisplayName)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return ctrl.Result{}, r.fail(ctx, c, fmt.Sprintf("spec.displayName: no EKS cluster named %s in %s to import", c.Spec.DisplayName, c.Spec.Region))
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("describe cluster %s: %w", c.Spec.DisplayName, err)
	case out.Cluster.Status != ekstypes.ClusterStatusActive:
		if c.Status.Phase != eksv1.PhaseImporting {
			c.Status.Phase = eksv1.PhaseImporting
			if err := r.Client.Status().Update(ctx, c); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: r.poll()}, nil
	}
	c.Status.NetworkFieldsSource = "provided"
	return r.becomeActive(ctx, c, out.Cluster)
}
