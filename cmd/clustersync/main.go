// Command clustersync keeps Kubernetes state in sync across cluster
// boundaries: virtual clusters synced into a host namespace, hosted cloud
// clusters managed from Kubernetes objects, and registered clusters connected
// by an agent. See README.md.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/version"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "clustersync",
		Short:         "Keep Kubernetes state in sync across cluster boundaries",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDemoCommand(), newDevCommand(), newVirtualCommand(), newSyncerCommand(), newInstallCommand(), newManagerCommand(), newClusterCommand(), newAgentCommand(), newVersionCommand())
	return root
}

// newVersionCommand prints clustersync's version and the Kubernetes version
// of the control planes it runs.
func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the versions of clustersync and of the binaries it runs",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "clustersync %s\nkubernetes %s, etcd %s, kwok %s\n",
				version.String(version.Version(), version.Commit()), binaries.KubernetesVersion, binaries.EtcdVersion, binaries.KwokVersion)
		},
	}
}
