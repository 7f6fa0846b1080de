// Package managed implements the managed-field semantics of hosted clusters
// (Rancher's, https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters), and closes the race
// window that document admits. It is pure: it takes values and returns
// decisions; the controllers do the I/O.
//
// A spec type (EKSClusterConfigSpec, later AKS and GKE ones) has identity
// fields, which are not pointers (name, region, credential, imported) and are
// never synced, and nillable fields: nil means unmanaged, non-nil managed.
//
//   - Effective desired state = the upstream spec (what the cloud reports)
//     with every non-nil config field laid over it (Effective).
//   - Rancher then overwrites managed config fields with upstream values after
//     each refresh, so a console change made just before a clustersync edit is
//     lost, or a clustersync edit made just after a console change is
//     reverted. clustersync keeps the last value it applied to the cloud for
//     each managed field (the applied spec) and decides per field (Plan):
//     config changed since applied and upstream did not → push the config;
//     upstream moved and config did not → adopt the upstream value into the
//     config (an outside change, reported); both changed → conflict, nothing
//     written, both values kept visible until the user edits the config.
//   - Lists of named elements (node groups) are compared element by element
//     by name, so one node group changed in the console and another in
//     clustersync are both kept, and a node group deleted in the console is
//     not recreated (rancher/rancher#28967).
package managed
