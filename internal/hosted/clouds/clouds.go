// Package clouds is the table of the clouds hosted clusters run on: one
// row (a management.Descriptor) per cloud, in the order the manager's
// flags, the dashboard's Add forms and the docs list them. The manager,
// its CLI flags and chart, the scheme, the dashboard and the benches
// range over All; outside the clouds' own folders, this package is the
// one that imports them (TestOnlyTheTableImportsClouds).
package clouds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// All returns the table of clouds: Amazon EKS, Azure AKS, Google GKE.
func All() []management.Descriptor {
	return []management.Descriptor{eks.Cloud(), aks.Cloud(), gke.Cloud()}
}

// ByKey returns the row of the cloud with Descriptor.Key key ("eks"); ok
// is false for no such cloud.
func ByKey(key string) (d management.Descriptor, ok bool) { return management.ByKey(All(), key) }

// AddToScheme adds every cloud's operator object kinds to s.
func AddToScheme(s *runtime.Scheme) error {
	for _, d := range All() {
		if err := d.AddToScheme(s); err != nil {
			return fmt.Errorf("%s kinds: %w", d.Name, err)
		}
	}
	return nil
}

// Hosted returns a hosted Cluster seen through whichever cloud its config
// is of; ok is false for a Cluster of no cloud (a registered one).
func Hosted(c *mgmtv1.Cluster) (management.View, bool) { return management.Hosted(All(), c) }
