// Package translate holds the pure rules that map a virtual cluster's objects
// onto the one host namespace that backs it: host names, the bookkeeping
// labels and annotations vCluster writes on every host object, the test that
// says whether a host object is managed by a given virtual cluster, and the
// three-way merge of labels and annotations between the two sides.
//
// Nothing here talks to an API server. The rules follow vCluster's syncer
// (shared/reference/001_8075f76a87691f22.txt, 002_c3c516dc3011c607.txt and
// section 1 of shared/design/anchors.md), so that tooling written for vCluster
// recognises clustersync's host objects.
package translate
