// Package v1 holds the status types every hosted-cluster operator object
// shares (EKSClusterConfig, AKSClusterConfig, GKEClusterConfig): the phase, the failure
// message and the record of what was applied, is on its way and is in
// conflict. The hosted-cluster engine (internal/hosted/engine) reads and
// writes this record the same way for every cloud; docs/hosted.md states
// the rules.
//
// It is not an API group of its own: the providers' groups
// (eks.clustersync.io, aks.clustersync.io, gke.clustersync.io) embed OperatorStatus inline, so
// its fields sit directly in their status.
//
// +kubebuilder:object:generate=true
package v1
