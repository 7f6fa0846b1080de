// Package translate holds the pure rules that map a virtual cluster's objects
// onto the one host namespace that backs it: host names, the bookkeeping
// labels and annotations vCluster writes on every host object, the test that
// says whether a host object is managed by a given virtual cluster, and the
// three-way merge of labels and annotations between the two sides.
//
// Nothing here talks to an API server. The rules follow vCluster's syncer
// (https://www.mintlify.com/loft-sh/vcluster/syncing/overview,
// https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync and its source,
// https://github.com/loft-sh/vcluster/tree/main/pkg/util/translate), so that
// tooling written for vCluster recognises clustersync's host objects.
package translate
