package gke

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// clusterOrder are the cluster fields GKE changes on an existing cluster,
// in the order the operator applies them, one call per pass (Rancher's
// gke-operator order, https://github.com/rancher/gke-operator): the
// control plane version first, then add-ons, authorized networks,
// logging, monitoring, network policy, locations, the maintenance window
// and labels. Each is its own call: GKE takes one change per cluster
// update.
var clusterOrder = []string{"kubernetesVersion", "clusterAddons", "masterAuthorizedNetworks", "loggingService", "monitoringService",
	"networkPolicyEnabled", "locations", "maintenanceWindow", "labels"}

// poolOrder are the pool fields GKE changes on an existing pool, in the
// order they are applied: the node version (after the control plane's),
// the node config, the autoscaler before the size (so that a size is not
// pushed to a pool being made autoscaled), then automatic management.
var poolOrder = []string{"version", "config", "autoscaling", "initialNodeCount", "management"}

// createOnly are the cluster fields GKE takes only at creation: a change
// on an existing cluster is refused, naming the field.
var createOnly = []string{"description", "enableKubernetesAlpha", "clusterIpv4Cidr", "network", "subnetwork", "privateClusterConfig",
	"ipAllocationPolicy", "autopilotConfig", "customerManagedEncryptionKey"}

// poolCreateOnly are the pool fields GKE takes only when the pool is
// created.
var poolCreateOnly = []string{"maxPodsConstraint"}

// Ranks after the cluster fields.
var (
	rankCreatePool = len(clusterOrder)
	rankPool       = rankCreatePool + 1
	rankDeletePool = rankPool + len(poolOrder)
	rankNever      = rankDeletePool + 1
)

// splitPoolPath splits "nodePools[NAME]" or "nodePools[NAME].field".
func splitPoolPath(p string) (name, field string, ok bool) {
	return managed.SplitElementPath(p, "nodePools")
}

func rank(ch managed.Change) int {
	if _, field, ok := splitPoolPath(ch.Path); ok {
		switch {
		case field != "":
			if i := slices.Index(poolOrder, field); i >= 0 {
				return rankPool + i
			}
			return rankNever
		case ch.Old == nil:
			return rankCreatePool
		}
		return rankDeletePool
	}
	if i := slices.Index(clusterOrder, ch.Path); i >= 0 {
		return i
	}
	return rankNever
}

// OrderUpdates sorts pushed changes into the order the operator applies
// them; changes of equal rank keep their order (field order of the spec).
func OrderUpdates(changes []managed.Change) []managed.Change {
	return engine.OrderBy(changes, rank)
}

// callGroup names the GKE call a pushed field is sent with: each field is
// its own call (one cluster update carries one change), a pool's whole
// creation or removal one call.
func callGroup(p string) string { return p }

// mutableNodeConfig are the node config fields GKE changes on an existing
// pool (UpdateNodePool).
var mutableNodeConfig = []string{"ImageType", "Labels", "Tags", "Taints"}

// vet refuses, before any call, what GKE would refuse or what would lose
// something: a field GKE takes only at creation, a version downgrade, a
// change of a node config field GKE cannot change on an existing pool,
// node pools of an Autopilot cluster, bad autoscaling bounds. An
// autoscaled pool's size is not pushed: the autoscaler owns it. ch.Old is
// the upstream value.
func vet(spec gkev1.GKEClusterConfigSpec, ch managed.Change) (bool, error) {
	name, field, isPool := splitPoolPath(ch.Path)
	switch {
	case slices.Contains(createOnly, ch.Path):
		return false, fmt.Errorf("%s: GKE sets it only when the cluster is created; it is %s in GKE (set it back, or create a new cluster)", ch.Path, managed.Show(ch.Old))
	case ch.Path == "kubernetesVersion" && ch.Old != nil && ch.New != nil:
		if _, err := nextVersion(fmt.Sprint(ch.Old), fmt.Sprint(ch.New)); err != nil {
			return false, fmt.Errorf("kubernetesVersion: %w", err)
		}
	case isPool && spec.AutopilotConfig != nil && spec.AutopilotConfig.Enabled:
		return false, fmt.Errorf("%s: an Autopilot cluster's nodes are managed by GKE; remove nodePools from the spec", ch.Path)
	case isPool && slices.Contains(poolCreateOnly, field):
		return false, fmt.Errorf("%s: GKE sets it only when pool %s is created; it is %s in GKE (add a pool with the new value and remove this one)", ch.Path, name, managed.Show(ch.Old))
	case isPool && field == "version" && ch.Old != nil && ch.New != nil:
		if _, err := nextVersion(fmt.Sprint(ch.Old), fmt.Sprint(ch.New)); err != nil {
			return false, fmt.Errorf("%s: %w", ch.Path, err)
		}
	case isPool && field == "config":
		old, okOld := ch.Old.(gkev1.GKENodeConfig)
		want, okNew := ch.New.(gkev1.GKENodeConfig)
		if fixed := fixedConfigChanges(old, want); okOld && okNew && len(fixed) > 0 {
			return false, fmt.Errorf("%s: GKE sets %s only when pool %s is created (add a pool with the new values and remove this one)", ch.Path, strings.Join(fixed, ", "), name)
		}
	case isPool && field == "initialNodeCount":
		if autoscaled(poolNamed(spec, name)) {
			return false, nil // the autoscaler owns it
		}
	case isPool && field == "autoscaling":
		if p := poolNamed(spec, name); p != nil {
			if err := validateAutoscaling("nodePools["+name+"]", p.Autoscaling); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// fixedConfigChanges names the fields of a node config that differ
// between old and want and that GKE cannot change on an existing pool
// (json names).
func fixedConfigChanges(old, want gkev1.GKENodeConfig) []string {
	var out []string
	o, w := reflect.ValueOf(old), reflect.ValueOf(want)
	t := o.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if slices.Contains(mutableNodeConfig, f.Name) {
			continue
		}
		if !reflect.DeepEqual(o.Field(i).Interface(), w.Field(i).Interface()) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, "config."+name)
		}
	}
	return out
}

// validateAutoscaling checks an autoscaled pool's bounds.
func validateAutoscaling(at string, a *gkev1.GKENodePoolAutoscaling) error {
	if a == nil || !a.Enabled {
		return nil
	}
	var errs []error
	if a.MaxNodeCount < 1 {
		errs = append(errs, fmt.Errorf("%s.autoscaling.maxNodeCount: an autoscaled pool needs a maximum of at least 1", at))
	}
	if a.MinNodeCount > a.MaxNodeCount {
		errs = append(errs, fmt.Errorf("%s.autoscaling.minNodeCount: %d exceeds maxNodeCount %d", at, a.MinNodeCount, a.MaxNodeCount))
	}
	return errors.Join(errs...)
}

// nextVersion is engine.NextVersion on GKE versions: the build suffix
// ("-gke.1000000") is set aside for the comparison. When the base
// versions match but desired names another build, desired is returned.
func nextVersion(current, desired string) (string, error) {
	next, err := engine.NextVersion("GKE", baseVersion(current), baseVersion(desired))
	if err != nil {
		return "", err
	}
	if next == "" && strings.Contains(desired, "-") && desired != current {
		return desired, nil
	}
	if next == baseVersion(desired) {
		return desired, nil
	}
	return next, nil
}
