package v1

import hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"

// ConfigSpec returns the address of c's spec, for the hosted-cluster
// engine (internal/hosted/engine).
func (c *EKSClusterConfig) ConfigSpec() *EKSClusterConfigSpec { return &c.Spec }

// OperatorRecord returns the address of the status the hosted-cluster
// engine keeps: phase, failure message, pending updates, conflicts.
func (c *EKSClusterConfig) OperatorRecord() *hostedv1.OperatorStatus {
	return &c.Status.OperatorStatus
}

// AppliedSpecRef returns the address of status.appliedSpec.
func (c *EKSClusterConfig) AppliedSpecRef() **EKSClusterConfigSpec { return &c.Status.AppliedSpec }
