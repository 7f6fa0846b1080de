package eks

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

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
