// Package charts holds clustersync's Helm charts, embedded in the binary so
// that `clustersync virtual create` installs the chart it was built with.
package charts

import "embed"

// VirtualCluster is charts/virtual-cluster: a virtual cluster's control
// plane as a StatefulSet of the host namespace (see its values.yaml).
//
//go:embed all:virtual-cluster
var VirtualCluster embed.FS
