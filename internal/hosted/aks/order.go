package aks

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Update ranks, in the order the operator applies changes, one call per
// pass (Rancher's aks-operator order, https://github.com/rancher/aks-operator):
// tags, then the cluster's own fields in one PUT (the control plane is
// upgraded before the pools), then pools created or changed, then pools
// removed.
const (
	rankTags = iota
	rankCluster
	rankCreatePool
	rankPool
	rankDeletePool
	rankNever
)

// Cluster fields one managed-cluster PUT changes.
var clusterFields = []string{"kubernetesVersion", "authorizedIpRanges", "httpApplicationRouting", "monitoring",
	"logAnalyticsWorkspaceGroup", "logAnalyticsWorkspaceName", "sshPublicKey"}

// createOnly are the cluster fields Azure takes only at creation: a change
// on an existing cluster is refused, naming the field.
var createOnly = []string{"dnsPrefix", "networkPlugin", "networkPolicy", "podCidr", "serviceCidr", "dnsServiceIp", "outboundType",
	"loadBalancerSku", "virtualNetwork", "virtualNetworkResourceGroup", "subnet", "nodeResourceGroup", "privateCluster",
	"privateDnsZone", "managedIdentity", "userAssignedIdentity", "linuxAdminUsername"}

// poolCreateOnly are the pool fields Azure takes only when the pool is
// created.
var poolCreateOnly = []string{"vmSize", "osType", "osDiskSizeGB", "osDiskType", "maxPods", "availabilityZones", "vnetSubnetID"}

// splitPoolPath splits "nodePools[NAME]" or "nodePools[NAME].field" into
// the name and the field ("" for the whole pool); ok is false for a path
// of a cluster field.
func splitPoolPath(p string) (name, field string, ok bool) {
	return managed.SplitElementPath(p, "nodePools")
}

func rank(ch managed.Change) int {
	if _, field, ok := splitPoolPath(ch.Path); ok {
		switch {
		case field != "":
			return rankPool
		case ch.Old == nil:
			return rankCreatePool
		}
		return rankDeletePool
	}
	switch {
	case ch.Path == "tags":
		return rankTags
	case slices.Contains(clusterFields, ch.Path):
		return rankCluster
	}
	return rankNever
}

// OrderUpdates sorts pushed changes into the order the operator applies
// them; changes of equal rank keep their order (field order of the spec).
func OrderUpdates(changes []managed.Change) []managed.Change {
	return engine.OrderBy(changes, rank)
}

// callGroup names the Azure call a pushed field is sent with: every
// cluster field goes in one managed-cluster PUT, every field of a pool in
// one agent-pool PUT, tags in one PATCH.
func callGroup(p string) string {
	if name, _, ok := splitPoolPath(p); ok {
		return "nodePools[" + name + "]"
	}
	if slices.Contains(clusterFields, p) {
		return "cluster"
	}
	return p
}

// vet refuses, before any call, what Azure would refuse or what would
// lose something: a field Azure takes only at creation, a version
// downgrade, the removal of the last System-mode pool. dockerBridgeCidr is
// never sent (AKS dropped it): there is nothing to push. ch.Old is the
// upstream value.
func vet(spec aksv1.AKSClusterConfigSpec, ch managed.Change) (bool, error) {
	name, field, isPool := splitPoolPath(ch.Path)
	switch {
	case ch.Path == "dockerBridgeCidr":
		return false, nil
	case slices.Contains(createOnly, ch.Path):
		return false, fmt.Errorf("%s: Azure sets it only when the cluster is created; it is %s in AKS (set it back, or create a new cluster)", ch.Path, managed.Show(ch.Old))
	case ch.Path == "kubernetesVersion" && ch.Old != nil && ch.New != nil:
		if _, err := engine.NextVersion("AKS", fmt.Sprint(ch.Old), fmt.Sprint(ch.New)); err != nil {
			return false, fmt.Errorf("kubernetesVersion: %w", err)
		}
	case isPool && field == "" && ch.New == nil: // a pool removed from the spec
		if old, ok := ch.Old.(aksv1.AKSNodePool); ok && isSystem(old) && !slices.ContainsFunc(pools(spec), isSystem) {
			return false, fmt.Errorf("%s: it is the last System-mode pool, which AKS requires; add another System pool first", ch.Path)
		}
	case isPool && slices.Contains(poolCreateOnly, field):
		return false, fmt.Errorf("%s: Azure sets it only when pool %s is created; it is %s in AKS (add a pool with the new value and remove this one)", ch.Path, name, managed.Show(ch.Old))
	case isPool && field == "count":
		if p := poolNamed(spec, name); p != nil && p.EnableAutoScaling != nil && *p.EnableAutoScaling {
			return false, nil // the autoscaler owns it
		}
	case isPool && (field == "enableAutoScaling" || field == "minCount" || field == "maxCount"):
		if p := poolNamed(spec, name); p != nil {
			if errs := validatePool("nodePools["+name+"]", *p); len(errs) > 0 {
				return false, errors.Join(errs...)
			}
		}
	}
	return true, nil
}

func isSystem(p aksv1.AKSNodePool) bool { return p.Mode != nil && *p.Mode == "System" }

func pools(spec aksv1.AKSClusterConfigSpec) []aksv1.AKSNodePool {
	return ptr.Deref(spec.NodePools, nil)
}

// poolNamed returns the pool of spec named name, nil when there is none.
func poolNamed(spec aksv1.AKSClusterConfigSpec, name string) *aksv1.AKSNodePool {
	return managed.Element(spec.NodePools, "name", name)
}
