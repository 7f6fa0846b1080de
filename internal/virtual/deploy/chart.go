// Package deploy installs, lists, pauses and removes virtual clusters that
// run inside a host cluster: releases of the Helm chart charts/virtual-cluster
// (embedded in the binary), installed with Helm's Go SDK as vCluster's CLI
// does, so that `clustersync virtual create` and `helm install` give the same
// objects.
package deploy

import (
	"cmp"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/runner"
)

// ChartName is the name in the chart's Chart.yaml; releases of other charts
// are not virtual clusters.
const ChartName = charts.VirtualClusterName

// Chart loads the embedded charts/virtual-cluster.
func Chart() (*chart.Chart, error) { return charts.Load(ChartName) }

// Values merges the values files (YAML, later files win) and the --set
// expressions (Helm's syntax, e.g. sync.toHost.ingresses.enabled=true)
// as `helm install -f … --set …` does, parses them (config.Parse: errors
// name the paths the user wrote), then checks what the control plane
// will read: it renders the chart with them (charts.Render, Helm's own
// merge with the chart's values.yaml and its templates) and parses the
// configuration file the chart writes for the pod (ConfigFile) with
// config.Parse and runner.CheckConfig, the code the pod runs at its start.
// So whatever the pod would refuse is refused here, before anything is
// installed: unknown keys and wrong types are errors naming their path, as
// are patches that do not compile and settings clustersync cannot honour; a
// template that fails is an error naming the chart. It returns the values
// to install (the user's, unmerged, as Helm takes them) and the
// configuration they mean.
func Values(files, sets []string) (map[string]any, *config.Config, error) {
	opts := values.Options{ValueFiles: files, Values: sets}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, nil, err
	}
	// The values as written first: their errors name what the user wrote,
	// before the chart's schema words them its own way.
	raw, err := yaml.Marshal(vals)
	if err != nil {
		return nil, nil, err
	}
	if _, err := config.Parse(raw); err != nil {
		return nil, nil, fmt.Errorf("values: %w", err)
	}
	data, err := ConfigFile(vals)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("values merged with the chart's values.yaml (the configuration file the control plane pod reads): %w", err)
	}
	if err := runner.CheckConfig(cfg); err != nil {
		return nil, nil, fmt.Errorf("values: %w", err)
	}
	return vals, cfg, nil
}

// Template returns the manifests that installing virtual cluster name in
// host namespace namespace with vals would create, as `helm template`
// prints them (charts.Template).
func Template(name, namespace string, vals map[string]any) (string, error) {
	return charts.Template(ChartName, name, namespace, vals)
}

// checkRelease is the release name ConfigFile renders the chart as; the
// configuration file does not depend on it.
const checkRelease = "check"

// ConfigFile renders the chart with vals and returns the configuration file
// the control plane pod reads: key config.yaml of Secret vc-config-RELEASE
// (charts/virtual-cluster/templates/config.yaml), i.e. the chart's
// values.yaml merged with vals by Helm. Errors are the chart's rendering
// errors.
func ConfigFile(vals map[string]any) ([]byte, error) {
	m, err := charts.Render(ChartName, checkRelease, "default", vals)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	key := "Secret/" + ConfigSecretName(checkRelease)
	var secret corev1.Secret
	if err := yaml.Unmarshal([]byte(m[key]), &secret); err != nil {
		return nil, fmt.Errorf("values: %s of the rendered chart: %w", key, err)
	}
	data, ok := secret.StringData[ConfigKey]
	if !ok {
		return nil, fmt.Errorf("values: the rendered chart has no %s in %s", ConfigKey, key)
	}
	return []byte(data), nil
}

// ConfigSecretName is the host Secret holding the configuration file of
// virtual cluster name (charts/virtual-cluster/templates/config.yaml).
func ConfigSecretName(name string) string { return "vc-config-" + name }

// ConfigKey is the key of the configuration file in ConfigSecretName.
const ConfigKey = "config.yaml"

// ControlPlaneImage is the image of the control plane pod that the chart
// runs for cfg: controlPlane.statefulSet.image as registry/repository:tag,
// the tag being the chart's appVersion when empty, the registry
// controlPlane.advanced.defaultImageRegistry when set (the template vc.image of
// charts/virtual-cluster/templates/_helpers.tpl).
func ControlPlaneImage(cfg *config.Config) (string, error) {
	img := cfg.ControlPlane.StatefulSet.Image
	tag := img.Tag
	if tag == "" {
		c, err := Chart()
		if err != nil {
			return "", err
		}
		tag = c.Metadata.AppVersion
	}
	ref := img.Repository + ":" + tag
	if reg := cmp.Or(cfg.ControlPlane.Advanced.DefaultImageRegistry, img.Registry); reg != "" {
		ref = reg + "/" + ref
	}
	return ref, nil
}
