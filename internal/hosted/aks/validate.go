package aks

import (
	"errors"
	"fmt"
	"slices"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
)

// ValidateCreate checks what creating a cluster from spec needs, beyond
// the schema (which the same type's upstream and applied copies must also
// pass): kubernetesVersion, dnsPrefix, at least one pool, one of them in
// System mode (AKS requires it), every pool with a vmSize, and minCount
// and maxCount on autoscaled pools, minCount ≤ maxCount. The errors, one
// per problem, name the field (spec.nodePools[NAME].field).
func ValidateCreate(spec aksv1.AKSClusterConfigSpec) error {
	var errs []error
	if spec.KubernetesVersion == nil {
		errs = append(errs, errors.New("spec.kubernetesVersion: required to create a cluster"))
	}
	if spec.DNSPrefix == nil || *spec.DNSPrefix == "" {
		errs = append(errs, errors.New("spec.dnsPrefix: required to create a cluster"))
	}
	ps := pools(spec)
	if len(ps) == 0 {
		errs = append(errs, errors.New("spec.nodePools: a cluster needs at least one pool"))
	} else if !slices.ContainsFunc(ps, isSystem) {
		errs = append(errs, errors.New("spec.nodePools: AKS needs at least one pool with mode System"))
	}
	for _, p := range ps {
		at := fmt.Sprintf("spec.nodePools[%s]", p.Name)
		if p.VMSize == nil || *p.VMSize == "" {
			errs = append(errs, fmt.Errorf("%s.vmSize: required to create a pool", at))
		}
		errs = append(errs, validatePool(at, p)...)
	}
	return errors.Join(errs...)
}

// validatePool checks a pool's autoscaling bounds.
func validatePool(at string, p aksv1.AKSNodePool) []error {
	var errs []error
	if p.EnableAutoScaling != nil && *p.EnableAutoScaling && (p.MinCount == nil || p.MaxCount == nil) {
		errs = append(errs, fmt.Errorf("%s: an autoscaled pool needs minCount and maxCount", at))
	}
	if p.MinCount != nil && p.MaxCount != nil && *p.MinCount > *p.MaxCount {
		errs = append(errs, fmt.Errorf("%s.minCount: %d exceeds maxCount %d", at, *p.MinCount, *p.MaxCount))
	}
	return errs
}
