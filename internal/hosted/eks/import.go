package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

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
