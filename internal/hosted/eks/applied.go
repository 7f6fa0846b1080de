package eks

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// What the EKS provider adds to the engine's record of what it applied
// (internal/hosted/engine, record.go): what a create call carries, how a
// created node group is recorded, and which fields one EKS call sets.

// createdApplied is the applied spec of a cluster CreateCluster was just
// sent for: the updatable fields the request carried (CreateClusterInput).
// Node groups are recorded as each is created.
func createdApplied(spec eksv1.EKSClusterConfigSpec) *eksv1.EKSClusterConfigSpec {
	s := spec.DeepCopy()
	return &eksv1.EKSClusterConfigSpec{
		DisplayName: s.DisplayName, Region: s.Region, AmazonCredentialSecret: s.AmazonCredentialSecret, Imported: s.Imported,
		KubernetesVersion: s.KubernetesVersion, Tags: s.Tags, LoggingTypes: s.LoggingTypes,
		PublicAccess: s.PublicAccess, PrivateAccess: s.PrivateAccess, PublicAccessSources: s.PublicAccessSources,
	}
}

// markCreated records node group ng, just created from the spec, as
// applied.
func markCreated(c *eksv1.EKSClusterConfig, ng string) error {
	return engine.MarkApplied[eksv1.EKSClusterConfigSpec](c, "nodeGroups["+ng+"]", ManagedOptions())
}

func updateErrors(errs []ekstypes.ErrorDetail) string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.ErrorCode, aws.ToString(e.ErrorMessage)))
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// AppliedFor returns what op's status records as applied, for deciding on
// config (the management Cluster's spec.eksConfig): engine.AppliedFor with
// the EKS options.
func AppliedFor(op *eksv1.EKSClusterConfig, config eksv1.EKSClusterConfigSpec) (applied eksv1.EKSClusterConfigSpec, ready bool, err error) {
	return engine.AppliedFor(op, config, ManagedOptions())
}
