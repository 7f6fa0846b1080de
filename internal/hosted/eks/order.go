package eks

import (
	"strings"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Update ranks, in the order the operator applies changes, one per pass
// (Rancher's eks-operator order, https://github.com/rancher/eks-operator).
const (
	rankVersion = iota
	rankEndpointAccess
	rankPublicAccessSources
	rankTags
	rankLogging
	rankCreateNodegroup
	rankDeleteNodegroup
	rankNodegroupLaunchTemplate
	rankNodegroupVersion
	rankNodegroupConfig
	rankEBSCSIDriver
	// rankImmutable are fields EKS cannot change after creation (subnets,
	// security groups, service role, encryption, IP family): reported, last.
	rankImmutable
)

// rank places one pushed change in the update order.
func rank(c managed.Change) int {
	path := c.Path
	if strings.HasPrefix(path, "nodeGroups[") {
		_, field, isField := strings.Cut(path, "].")
		switch {
		case !isField && c.Old == nil:
			return rankCreateNodegroup
		case !isField:
			return rankDeleteNodegroup
		case field == "launchTemplate" || isTemplateField(field):
			return rankNodegroupLaunchTemplate
		case field == "version":
			return rankNodegroupVersion
		}
		return rankNodegroupConfig
	}
	switch path {
	case "kubernetesVersion":
		return rankVersion
	case "publicAccess", "privateAccess":
		return rankEndpointAccess
	case "publicAccessSources":
		return rankPublicAccessSources
	case "tags":
		return rankTags
	case "loggingTypes":
		return rankLogging
	case "ebsCSIDriver":
		return rankEBSCSIDriver
	}
	return rankImmutable
}

// OrderUpdates sorts pushed changes into the order the operator applies
// them; changes of equal rank keep their order (field order of the spec).
func OrderUpdates(changes []managed.Change) []managed.Change {
	return engine.OrderBy(changes, rank)
}

// Immutable reports whether a change is to a field EKS cannot update after
// the cluster exists.
func Immutable(c managed.Change) bool { return rank(c) == rankImmutable }

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

// vet leaves out the fields EKS cannot change after creation (Immutable)
// and the changes there is nothing to send for (ignored).
func vet(spec eksv1.EKSClusterConfigSpec, ch managed.Change) (bool, error) {
	return !Immutable(ch) && !ignored(&spec, ch), nil
}
