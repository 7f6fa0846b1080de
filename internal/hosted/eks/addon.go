package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

// EBSCSIDriverAddon is the name of the Amazon EBS CSI driver add-on that
// spec.ebsCSIDriver installs.
const EBSCSIDriverAddon = "aws-ebs-csi-driver"

// ebsCSIDriverInstalled reports whether the cluster has the EBS CSI driver
// add-on (in any state but DELETING).
func ebsCSIDriverInstalled(ctx context.Context, api API, cluster string) (bool, error) {
	out, err := api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(cluster), AddonName: aws.String(EBSCSIDriverAddon)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("describe add-on %s: %w", EBSCSIDriverAddon, err)
	}
	return out.Addon.Status != ekstypes.AddonStatusDeleting, nil
}

// installEBSCSIDriver creates the EBS CSI driver add-on when DescribeAddon
// says it does not exist, as Rancher's operator does, with the version EKS
// picks by default. Its pods use the nodes' role: the generated node role
// carries AmazonEBSCSIDriverPolicy (a role of the user's needs it too). An
// add-on still being deleted is waited for (errPending); an existing one
// is left as it is.
func installEBSCSIDriver(ctx context.Context, api API, cluster string) error {
	out, err := api.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(cluster), AddonName: aws.String(EBSCSIDriverAddon)})
	var nf *ekstypes.ResourceNotFoundException
	switch {
	case err == nil && out.Addon.Status == ekstypes.AddonStatusDeleting:
		return errPending
	case err == nil:
		return nil
	case !errors.As(err, &nf):
		return fmt.Errorf("describe add-on %s: %w", EBSCSIDriverAddon, err)
	}
	_, err = api.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String(cluster), AddonName: aws.String(EBSCSIDriverAddon),
		ResolveConflicts: ekstypes.ResolveConflictsOverwrite})
	var inUse *ekstypes.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil // created by an earlier call
	}
	return wrap("create add-on "+EBSCSIDriverAddon, err)
}
