// Command clustersync keeps Kubernetes state in sync across cluster
// boundaries: virtual clusters synced into a host namespace, hosted cloud
// clusters managed from Kubernetes objects, and registered clusters connected
// by an agent. See README.md.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
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
	return root
}
