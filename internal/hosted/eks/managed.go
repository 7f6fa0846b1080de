package eks

import "github.com/clustersync/clustersync/internal/hosted/managed"

// ManagedOptions returns the managed-field options of EKSClusterConfigSpec:
// node groups are compared by nodegroupName, and the networking and role
// fields Rancher never takes from upstream (https://github.com/rancher/eks-operator)
// are never adopted.
func ManagedOptions() managed.Options {
	return managed.Options{
		KeyedLists: map[string]string{"nodeGroups": "nodegroupName"},
		NeverAdopt: []string{"subnets", "securityGroups", "serviceRole"},
	}
}
