// Package engine is the hosted-cluster operator every cloud shares: it
// drives a provider's operator objects (EKSClusterConfig,
// AKSClusterConfig, GKEClusterConfig) through Rancher's phases and applies spec changes with
// clustersync's sync rule, the same way for each cloud. A cloud plugs in
// through a small contract (provider.go, modelled on cluster-api's
// provider contracts, https://cluster-api.sigs.k8s.io/developer/providers/contracts/overview):
//
//   - Traits, data and pure functions: the cloud's name and finalizer,
//     the spec type's managed-field options, the order and grouping of
//     update calls, which pushes there is nothing to send for or that must
//     be refused, which errors are transient, whether a push is verified
//     on upstream.
//   - Provider, the calls: Open connects one object to the cloud for one
//     pass, a Session.
//   - Session: create (possibly over several passes), wait for the created
//     cluster, import, observe (upstream spec and whether the cloud is
//     busy), the outcome of an operation, apply one call, delete.
//
// The engine owns the rest: phases and finalizer, status.failureMessage
// and retries with backoff, waiting while the cloud is busy, the applied
// record with its write-ahead and undo, pending pushes and their outcome,
// conflicts and their answer (record.go; the comparisons are package
// managed's). docs/hosted.md states the rules.
package engine
