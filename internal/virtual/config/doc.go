// Package config is the configuration file of a clustersync virtual cluster:
// its Go types, their defaults, a strict parser and semantic validation. The
// `sync:` section (toHost and fromHost) and the `controlPlane:` section mirror
// vCluster's values.yaml, with the same keys, nesting and defaults as
// vCluster's sync configuration reference
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync), so a vCluster user can carry
// their settings over unchanged; the `syncer:` section (reconcile workers and
// client rate limits) is clustersync's own. The package is pure: apart from
// Load, which reads one file, it performs no I/O and talks to no cluster.
package config
