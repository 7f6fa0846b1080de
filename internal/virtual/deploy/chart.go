// Package deploy installs, lists, pauses and removes virtual clusters that
// run inside a host cluster: releases of the Helm chart charts/virtual-cluster
// (embedded in the binary), installed with Helm's Go SDK as vCluster's CLI
// does, so that `clustersync virtual create` and `helm install` give the same
// objects.
package deploy

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// ChartName is the name in the chart's Chart.yaml; releases of other charts
// are not virtual clusters.
const ChartName = charts.VirtualClusterName

// Chart loads the embedded charts/virtual-cluster.
func Chart() (*chart.Chart, error) { return charts.Load(ChartName) }

// Values merges the values files (YAML, later files win) and the --set
// expressions (Helm's syntax, e.g. sync.toHost.ingresses.enabled=true)
// as `helm install -f … --set …` does, and checks the result as the
// configuration file it becomes (config.Parse): unknown keys and wrong types
// are errors naming their path. It returns the values to install and the
// configuration they mean.
func Values(files, sets []string) (map[string]any, *config.Config, error) {
	opts := values.Options{ValueFiles: files, Values: sets}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, nil, err
	}
	data, err := yaml.Marshal(vals)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("values: %w", err)
	}
	return vals, cfg, nil
}
