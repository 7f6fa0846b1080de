package eks

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// Tags the operator puts on the CloudFormation stacks and the launch
// template it creates. Only resources whose OwnerUIDTag is the
// EKSClusterConfig's UID are ever deleted, so that a stack of the same
// name made by someone else is left alone.
const (
	// OwnerUIDTag holds the metadata.uid of the EKSClusterConfig.
	OwnerUIDTag = "eks.clustersync.io/owner-uid"
	// OwnerTag holds "namespace/name" of the EKSClusterConfig, for people.
	OwnerTag = "eks.clustersync.io/owner"
)

// Templates of the generated stacks: JSON CloudFormation templates
// written for clustersync, with the resources of Rancher's eks-operator
// stacks (Rancher's EKS driver, https://github.com/rancher/eks-operator: VPC, subnets across availability zones,
// security group, internet gateway and route table; the EKS service role;
// the node instance role).
var (
	//go:embed templates/vpc.json
	vpcTemplate string
	//go:embed templates/service-role.json
	serviceRoleTemplate string
	//go:embed templates/node-role.json
	nodeRoleTemplate string
)

// stackKind is one of the stacks the operator generates.
type stackKind struct {
	// suffix makes the stack name from the display name (Rancher's names).
	suffix string
	// template is the template body.
	template string
	// field is the spec field whose absence makes the stack needed.
	field string
}

var (
	vpcStack         = stackKind{suffix: "-eks-vpc", template: vpcTemplate, field: "spec.subnets"}
	serviceRoleStack = stackKind{suffix: "-eks-service-role", template: serviceRoleTemplate, field: "spec.serviceRole"}
	nodeRoleStack    = stackKind{suffix: "-node-instance-role", template: nodeRoleTemplate, field: "spec.nodeGroups[].nodeRole"}
)

// StackNames returns the names of the CloudFormation stacks generated for
// a cluster named displayName, as Rancher's eks-operator names them:
// "<displayName>-eks-vpc" (networking, when spec.subnets is empty),
// "<displayName>-eks-service-role" (when spec.serviceRole is empty) and
// "<displayName>-node-instance-role" (when a node group has no nodeRole).
func StackNames(displayName string) (vpc, serviceRole, nodeRole string) {
	return displayName + vpcStack.suffix, displayName + serviceRoleStack.suffix, displayName + nodeRoleStack.suffix
}

func (k stackKind) name(c *eksv1.EKSClusterConfig) string { return c.Spec.DisplayName + k.suffix }

// stackFailedError is a generated stack that failed: CloudFormation's
// status and reason.
type stackFailedError struct {
	name, status, reason string
}

func (e *stackFailedError) Error() string {
	msg := fmt.Sprintf("CloudFormation stack %s is %s", e.name, e.status)
	if e.reason != "" {
		msg += ": " + e.reason
	}
	return msg
}

// notOwnedError is a stack or launch template with the operator's name
// that another EKSClusterConfig (or someone else) created.
type notOwnedError struct {
	what, name, field string
}

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("%s %s exists but was not created for this EKSClusterConfig (tag %s); remove it or set %s",
		e.what, e.name, OwnerUIDTag, e.field)
}

// needStacks returns the stacks a cluster being created needs: networking
// when spec.subnets is empty, the service role when spec.serviceRole is,
// the node role when a node group has no nodeRole.
func needStacks(spec *eksv1.EKSClusterConfigSpec) []stackKind {
	var out []stackKind
	if spec.Subnets == nil || len(*spec.Subnets) == 0 {
		out = append(out, vpcStack)
	}
	if spec.ServiceRole == nil || *spec.ServiceRole == "" {
		out = append(out, serviceRoleStack)
	}
	if needsNodeRole(spec) {
		out = append(out, nodeRoleStack)
	}
	return out
}

func needsNodeRole(spec *eksv1.EKSClusterConfigSpec) bool {
	if spec.NodeGroups == nil {
		return false
	}
	for _, ng := range *spec.NodeGroups {
		if ng.NodeRole == nil || *ng.NodeRole == "" {
			return true
		}
	}
	return false
}

// errNoServices is the failure of a cluster that needs CloudFormation or
// EC2 when the reconciler has no clients for them.
func errNoServices(what string) error {
	return fmt.Errorf("%s needs CloudFormation and EC2 clients, and Provider.NewClients made none (use eks.NewClientsFactory)", what)
}

// describeStack returns the stack named name, or nil when CloudFormation
// does not know it (a ValidationError "Stack with id ... does not exist").
func describeStack(ctx context.Context, cfn CloudFormationAPI, name string) (*cfntypes.Stack, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ValidationError" && strings.Contains(ae.ErrorMessage(), "does not exist") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	for i := range out.Stacks {
		if aws.ToString(out.Stacks[i].StackName) == name {
			return &out.Stacks[i], nil
		}
	}
	return nil, nil
}

func ownedStack(st *cfntypes.Stack, c *eksv1.EKSClusterConfig) bool {
	for _, t := range st.Tags {
		if aws.ToString(t.Key) == OwnerUIDTag {
			return aws.ToString(t.Value) == string(c.UID)
		}
	}
	return false
}

// ensureStack creates the stack of kind k when it does not exist and
// returns its outputs once it is CREATE_COMPLETE; done is false while it
// is being created. A failed stack is a *stackFailedError with
// CloudFormation's reason.
func ensureStack(ctx context.Context, cfn CloudFormationAPI, c *eksv1.EKSClusterConfig, k stackKind) (outputs map[string]string, done bool, err error) {
	name := k.name(c)
	st, err := describeStack(ctx, cfn, name)
	if err != nil {
		return nil, false, err
	}
	if st == nil {
		_, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{
			StackName:    aws.String(name),
			TemplateBody: aws.String(k.template),
			Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam},
			Tags: []cfntypes.Tag{
				{Key: aws.String(OwnerUIDTag), Value: aws.String(string(c.UID))},
				{Key: aws.String(OwnerTag), Value: aws.String(c.Namespace + "/" + c.Name)},
			},
		})
		var exists *cfntypes.AlreadyExistsException
		if err != nil && !errors.As(err, &exists) { // exists: created by a retried call
			return nil, false, fmt.Errorf("create stack %s: %w", name, err)
		}
		return nil, false, nil
	}
	if !ownedStack(st, c) {
		return nil, false, &notOwnedError{what: "CloudFormation stack", name: name, field: k.field}
	}
	switch st.StackStatus {
	case cfntypes.StackStatusCreateComplete:
		outputs = map[string]string{}
		for _, o := range st.Outputs {
			outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
		}
		return outputs, true, nil
	case cfntypes.StackStatusCreateInProgress, cfntypes.StackStatusDeleteInProgress:
		// Being created, or an earlier stack of ours still being deleted:
		// wait, and create it again once it is gone.
		return nil, false, nil
	}
	return nil, false, &stackFailedError{name: name, status: string(st.StackStatus), reason: aws.ToString(st.StackStatusReason)}
}

// generated is what the stacks of a cluster being created produced.
type generated struct {
	vpcID, serviceRole, nodeRole string
	subnets, securityGroups      []string
}

// generate ensures every stack the spec needs (all requested in the same
// pass, so they are created in parallel) and returns their outputs; done
// is false until all are CREATE_COMPLETE.
func generate(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (g generated, done bool, err error) {
	need := needStacks(&c.Spec)
	if len(need) == 0 {
		return g, true, nil
	}
	if cs.CloudFormation == nil {
		fields := make([]string, len(need))
		for i, k := range need {
			fields[i] = k.field
		}
		return g, false, errNoServices("generating what " + strings.Join(fields, ", ") + " leave(s) empty")
	}
	done = true
	var errs []error
	for _, k := range need {
		out, ok, err := ensureStack(ctx, cs.CloudFormation, c, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = done && ok
		if !ok {
			continue
		}
		switch k {
		case vpcStack:
			g.vpcID = out["VpcId"]
			g.subnets = splitList(out["SubnetIds"])
			g.securityGroups = splitList(out["SecurityGroups"])
		case serviceRoleStack:
			g.serviceRole = out["RoleArn"]
		case nodeRoleStack:
			g.nodeRole = out["NodeInstanceRole"]
		}
	}
	if err := errors.Join(errs...); err != nil {
		return g, false, err
	}
	return g, done, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
