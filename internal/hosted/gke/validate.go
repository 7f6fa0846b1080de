package gke

import (
	"errors"
	"fmt"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
)

// ValidateCreate checks what creating a cluster from spec needs, beyond
// the schema (which the same type's upstream and applied copies must also
// pass): kubernetesVersion; at least one pool, or autopilotConfig.enabled
// and then no pools; autoscaled pools with maxNodeCount ≥ 1 and
// minNodeCount ≤ maxNodeCount. The errors, one per problem, name the field
// (spec.nodePools[NAME].field).
func ValidateCreate(spec gkev1.GKEClusterConfigSpec) error {
	var errs []error
	if spec.KubernetesVersion == nil || *spec.KubernetesVersion == "" {
		errs = append(errs, errors.New("spec.kubernetesVersion: required to create a cluster"))
	}
	autopilot := spec.AutopilotConfig != nil && spec.AutopilotConfig.Enabled
	switch ps := pools(spec); {
	case autopilot && len(ps) > 0:
		errs = append(errs, errors.New("spec.nodePools: an Autopilot cluster's nodes are managed by GKE; leave nodePools unset"))
	case !autopilot && len(ps) == 0:
		errs = append(errs, errors.New("spec.nodePools: a cluster needs at least one pool (or autopilotConfig.enabled)"))
	}
	for _, p := range pools(spec) {
		if err := validateAutoscaling(fmt.Sprintf("spec.nodePools[%s]", p.Name), p.Autoscaling); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
