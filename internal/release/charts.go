package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/clustersync/clustersync/charts"
)

// ChartNames are the charts a release ships, as their folders in charts/.
func ChartNames() []string { return []string{charts.ManagerName, charts.VirtualClusterName} }

// Charts packages each chart of ChartNames, stamped with release version
// v (charts.Stamp: version 0.2.0, appVersion v0.2.0, the images of the
// release), into folder out as Helm does ("manager-0.2.0.tgz"), and
// returns the files' names. Errors name the chart.
func Charts(out, v string) ([]string, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, name := range ChartNames() {
		c, err := charts.Load(name)
		if err != nil {
			return nil, err
		}
		charts.Stamp(c, v)
		path, err := chartutil.Save(c, out)
		if err != nil {
			return nil, fmt.Errorf("release: package chart %s: %w", name, err)
		}
		names = append(names, filepath.Base(path))
	}
	return names, nil
}

// ChartRef is the OCI reference of chart name at chart version cv under
// repo (a registry host and optional path, "ghcr.io/clustersync"):
// "ghcr.io/clustersync/charts/manager:0.2.0"; `helm install --version
// 0.2.0 oci://ghcr.io/clustersync/charts/manager` installs it.
func ChartRef(repo, name, cv string) string { return repo + "/charts/" + name + ":" + cv }

// PushCharts pushes the packaged charts files (Charts' names, in folder
// dir) to repo as OCI artifacts (ChartRef) with Helm's registry client,
// which takes the credentials of `helm registry login` and Docker's
// config; plainHTTP for a local registry (`dev up`'s). It returns the
// references pushed. Errors name the file.
func PushCharts(dir string, files []string, repo string, plainHTTP bool) ([]string, error) {
	var opts []registry.ClientOption
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		c, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("release: %s: %w", f, err)
		}
		ref := ChartRef(repo, c.Name(), c.Metadata.Version)
		if _, err := client.Push(data, ref); err != nil {
			return nil, fmt.Errorf("release: push %s to %s: %w", f, ref, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}
