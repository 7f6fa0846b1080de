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

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The chart folders of this package.
const (
	VirtualClusterName = "virtual-cluster"
	ManagerName        = "manager"
)

//go:embed all:virtual-cluster all:manager
var files embed.FS

// Load returns the embedded chart of folder name (VirtualClusterName or
// ManagerName), or an error naming it when it is not one or does not load.
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
	return c, nil
}
