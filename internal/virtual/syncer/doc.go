// Package syncer is the generic sync engine of a virtual cluster: one
// controller per resource kind, watching the kind in the virtual cluster
// (through the manager's cache) and in the host namespace (through a
// cluster.Cluster's cache), and dispatching each change the way vCluster's
// syncer does (https://www.mintlify.com/loft-sh/vcluster/syncing/overview,
// "Reconciliation Flow"):
//
//   - both objects exist → UID check, then Sync (bidirectional);
//   - only the virtual object exists → SyncToHost;
//   - only the host object exists → SyncToVirtual; for kinds synced to the
//     host (Kind's default) the host copy is deleted, since its virtual
//     object is gone, unless it carries vcluster.loft.sh/skip-backsync.
//
// A host object the virtual cluster does not manage (translate.IsManaged) is
// never changed or deleted; a name collision with one is reported as a
// SyncError event on the virtual object. The engine keeps the labels and
// annotations of each pair as they were after the last sync (the last-seen
// cache), so that changes on either side are told apart (translate.Merge3).
// A resource kind only says how to build the host object and which fields
// flow which way.
package syncer
