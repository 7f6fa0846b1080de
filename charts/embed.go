// Package charts holds clustersync's Helm charts, embedded in the binary so
// that `clustersync virtual create` installs the chart it was built with:
// virtual-cluster (a virtual cluster's control plane as a StatefulSet of the
// host namespace) and manager (the hosted/registered-cluster manager as a
// Deployment).
package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/version"
)

// The chart folders of this package.
const (
	VirtualClusterName = "virtual-cluster"
	ManagerName        = "manager"
)

//go:embed all:virtual-cluster all:manager
var files embed.FS

// Load returns the embedded chart of folder name (VirtualClusterName or
// ManagerName), stamped with the binary's version (Stamp), or an error
// naming it when it is not one or does not load.
func Load(name string) (*chart.Chart, error) {
	var bf []*loader.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		bf = append(bf, &loader.BufferedFile{Name: strings.TrimPrefix(p, name+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("embedded chart %s: %w", name, err)
	}
	c, err := loader.LoadFiles(bf)
	if err != nil {
		return nil, fmt.Errorf("embedded chart %s: %w", name, err)
	}
	Stamp(c, version.Version())
	return c, nil
}

// Stamp sets chart c's version and appVersion to release version v
// ("v0.2.0": version 0.2.0, appVersion v0.2.0, the tag of the images its
// templates default to); a development build's chart keeps its own
// (appVersion "latest", what `clustersync dev image` pushes).
func Stamp(c *chart.Chart, v string) {
	if !version.Released(v) {
		return
	}
	c.Metadata.Version, c.Metadata.AppVersion = version.ChartVersion(v), version.ImageTag(v)
}

// Template returns what `helm template RELEASE CHART -n NAMESPACE` prints
// for embedded chart name with vals: its manifests, each after a "---" and
// a "# Source: CHART/templates/FILE" line, in Helm's install order
// (Kubernetes v1.37 as the target; no cluster is asked, so lookups find
// nothing). It returns the chart's rendering error, or one of the values
// against the chart's values.schema.json.
func Template(name, release, namespace string, vals map[string]any) (string, error) {
	c, err := Load(name)
	if err != nil {
		return "", err
	}
	return template(c, release, namespace, vals)
}

// template is Template of chart c.
func template(c *chart.Chart, release, namespace string, vals map[string]any) (string, error) {
	name := c.Name()
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = release, namespace
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.37.0", Major: "1", Minor: "37"}
	rel, err := in.Run(c, vals)
	if err != nil {
		return "", fmt.Errorf("helm template %s: %w", name, err)
	}
	return rel.Manifest, nil
}

// Render returns the manifests of Template keyed "Kind/name", or
// "Kind/name/namespace" for an object of a namespace other than namespace.
// It returns Template's errors, or one naming a manifest that is not YAML.
func Render(name, release, namespace string, vals map[string]any) (map[string]string, error) {
	manifest, err := Template(name, release, namespace, vals)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range releaseutil.SplitManifests(manifest) {
		var meta struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal([]byte(m), &meta); err != nil {
			return nil, fmt.Errorf("helm template %s: manifest: %w\n%s", name, err, m)
		}
		key := meta.Kind + "/" + meta.Metadata.Name
		if meta.Metadata.Namespace != "" && meta.Metadata.Namespace != namespace {
			key += "/" + meta.Metadata.Namespace
		}
		out[key] = m
	}
	return out, nil
}
