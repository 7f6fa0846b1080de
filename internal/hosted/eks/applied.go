package eks

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
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

// callGroup names the EKS call a pushed field is sent with: fields that
// one call sets together share a group (endpoint access; a node group's
// scaling; a node group's managed launch template version).
func callGroup(path string) string {
	switch path {
	case "publicAccess", "privateAccess":
		return "endpointAccess"
	}
	if name, field, ok := splitNodegroupPath(path); ok {
		switch {
		case field == "":
		case field == "desiredSize" || field == "minSize" || field == "maxSize":
			return "nodeGroups[" + name + "].scaling"
		case isTemplateField(field):
			return "nodeGroups[" + name + "].template"
		}
	}
	return path
}

// sameCall returns the first change of ordered and every other change
// sent with the same EKS call (callGroup).
func sameCall(ordered []managed.Change) []managed.Change {
	return engine.SameCall(ordered, callGroup)
}

// AppliedFor returns what op's status records as applied, for deciding on
// config (the management Cluster's spec.eksConfig): engine.AppliedFor with
// the EKS options.
func AppliedFor(op *eksv1.EKSClusterConfig, config eksv1.EKSClusterConfigSpec) (applied eksv1.EKSClusterConfigSpec, ready bool, err error) {
	return engine.AppliedFor(op, config, ManagedOptions())
}
