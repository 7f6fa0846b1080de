package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/config/crd"
)

// newInstallCommand is `clustersync install`: puts what clustersync's
// controllers need into a management cluster. Today: `install crds`.
func newInstallCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install what clustersync needs in a management cluster",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "",
		"kubeconfig of the management cluster (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.AddCommand(newInstallCRDsCommand(&kubeconfig))
	return cmd
}

// newInstallCRDsCommand is `clustersync install crds`: creates or updates the
// CustomResourceDefinitions of api/ (management.clustersync.io Cluster,
// eks.clustersync.io EKSClusterConfig) and waits until they are served.
func newInstallCRDsCommand(kubeconfig *string) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "crds",
		Short: "Create or update clustersync's CustomResourceDefinitions and wait until they are established",
		Long: `Create or update clustersync's CustomResourceDefinitions (server-side apply,
field manager "clustersync") in the cluster of --kubeconfig, and wait until
each is established and served. Running it again updates them in place.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadKubeconfig(*kubeconfig)
			if err != nil {
				return err
			}
			crds, err := crd.CRDs()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := crd.Install(ctx, cfg); err != nil {
				return err
			}
			for _, c := range crds {
				fmt.Fprintf(cmd.OutOrStdout(), "customresourcedefinition.apiextensions.k8s.io/%s installed (kind %s, established)\n",
					c.Name, c.Spec.Names.Kind)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", crd.DefaultTimeout, "how long to wait for the CRDs to be established")
	return cmd
}

// loadKubeconfig returns the REST config of path, or, when path is empty,
// of the standard loading rules: $KUBECONFIG, else ~/.kube/config (and, in
// a pod, the in-cluster config).
func loadKubeconfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}
