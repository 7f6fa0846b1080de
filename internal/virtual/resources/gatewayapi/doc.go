// Package gatewayapi syncs the tenant's Gateway API objects
// (gateway.networking.k8s.io/v1, https://gateway-api.sigs.k8s.io) to the
// host and shows the host's GatewayClasses and chosen Gateways read-only in
// the virtual cluster, as vCluster 0.35+ does (sync.toHost.gatewayApi,
// sync.fromHost.gatewayClasses, sync.fromHost.gateways;
// https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync/to-host/networking/gateway-api
// and docs/design/gateway-api.md in this repository):
//
//   - A tenant Gateway becomes NAME-x-NAMESPACE-x-VCLUSTER in the host
//     namespace (HostGatewaySpec): its class must be one the tenant sees,
//     its listeners admit routes of the one host namespace only (the
//     tenant's own admission rules are checked in the virtual cluster), its
//     certificate Secrets are the host copies.
//   - A tenant HTTPRoute or TLSRoute reaches the host only when every
//     parent admits it and every cross-namespace backend is granted by a
//     ReferenceGrant in the virtual cluster (Authorize); its parent and
//     backend references then name the host objects, and the host's
//     status.parents come back with the tenant's own parent references
//     (VirtualRouteStatus).
//   - A BackendTLSPolicy's targets and CA references name the host copies.
//
// Everything here but the syncers (gateways.go, routes.go, policies.go;
// lookup.go reads their caches) is pure and
// table-tested; what a decision needs from the virtual cluster comes
// through Lookup.
package gatewayapi
