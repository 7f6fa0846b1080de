package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/inspect"
	"github.com/clustersync/clustersync/internal/virtual/instance"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// newVirtualCommand is `clustersync virtual`: virtual clusters on this machine.
func newVirtualCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "virtual",
		Aliases: []string{"vcluster", "vc"},
		Short:   "Create and manage virtual clusters backed by a host cluster",
	}
	cmd.AddCommand(newVirtualCreateCommand(), newVirtualListCommand(), newVirtualStatusCommand(), newVirtualConnectCommand(),
		newVirtualStartCommand(), newVirtualStopCommand(), newVirtualDeleteCommand(), newVirtualPauseCommand(), newVirtualResumeCommand(), newVirtualUpgradeCommand(), newVirtualServeCommand(), newVirtualComponentCommand())
	return cmd
}

// executable is the path of the running clustersync binary, which starts
// the supervisor and the syncer.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the clustersync binary: %w", err)
	}
	return filepath.EvalSymlinks(exe)
}

// defaultHostKubeconfig is the kubeconfig of the host: $KUBECONFIG, else the
// local host of `clustersync dev up`, else ~/.kube/config.
func defaultHostKubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return k
	}
	dev := filepath.Join(stateHome(), "host", "kubeconfig.yaml")
	if _, err := os.Stat(dev); err == nil {
		return dev
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kube", "config")
}

func newVirtualStatusCommand() *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show the objects of a virtual namespace next to their host copies",
		Long: `Show each Pod, Service, ConfigMap, Secret and PersistentVolumeClaim of a
virtual namespace next to its host copy (or "not synced"), as ` + "`make run`" + ` does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			i, err := instance.Load(stateHome(), args[0])
			if err != nil {
				return err
			}
			if _, ok := i.Status(); !ok {
				return errors.New(stoppedHint(i.Name))
			}
			vc, hc, err := instanceClients(i)
			if err != nil {
				return err
			}
			return printNamespace(cmd.Context(), cmd.OutOrStdout(), i.Name, i.HostNamespace, vc, hc, namespace)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "virtual namespace to show")
	return cmd
}

// stoppedHint says that virtual cluster name is stopped and how to start it.
func stoppedHint(name string) string {
	return fmt.Sprintf("virtual cluster %s is stopped; `clustersync virtual start %s` starts it", name, name)
}

// instanceClients returns clients of virtual cluster i and of its host.
func instanceClients(i *instance.Instance) (virtual, host client.Client, err error) {
	vcfg, err := clientcmd.BuildConfigFromFlags("", i.Kubeconfig())
	if err != nil {
		return nil, nil, err
	}
	hcfg, err := i.HostConfig()
	if err != nil {
		return nil, nil, err
	}
	if virtual, err = client.New(vcfg, client.Options{Scheme: clientgoscheme.Scheme}); err != nil {
		return nil, nil, err
	}
	host, err = client.New(hcfg, client.Options{Scheme: clientgoscheme.Scheme})
	return virtual, host, err
}

// printNamespace prints each object of virtual namespace ns of virtual
// cluster name (synced to host namespace hostNamespace) next to its host
// copy.
func printNamespace(ctx context.Context, out io.Writer, name, hostNamespace string, virtual, host client.Client, ns string) error {
	tr := translate.Translator{VCluster: name, HostNamespace: hostNamespace}
	rows, err := inspect.Namespace(ctx, virtual, host, tr, ns)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nVirtual namespace %s of %s and its host copies in host namespace %s:\n\n", ns, name, hostNamespace)
	return inspect.Print(out, rows)
}

// instanceCommand is a `virtual VERB NAME` command that loads virtual
// cluster NAME, runs act on it and prints act's message.
func instanceCommand(use, short string, act func(ctx context.Context, i *instance.Instance) (string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			i, err := instance.Load(stateHome(), args[0])
			if err != nil {
				return err
			}
			msg, err := act(cmd.Context(), i)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}

func newVirtualStartCommand() *cobra.Command {
	return instanceCommand("start NAME", "Start a stopped virtual cluster; its objects and address are kept",
		func(ctx context.Context, i *instance.Instance) (string, error) {
			exe, err := executable()
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Virtual cluster %s is running.", i.Name), i.Start(ctx, exe)
		})
}

func newVirtualStopCommand() *cobra.Command {
	return instanceCommand("stop NAME", "Stop a virtual cluster; its state and host objects are kept",
		func(ctx context.Context, i *instance.Instance) (string, error) {
			return fmt.Sprintf("Virtual cluster %s is stopped.", i.Name), i.Stop(ctx)
		})
}

func newVirtualServeCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Run a virtual cluster's control plane and syncer in the foreground (used by create/start)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := executable()
			if err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			return instance.Serve(ctx, dir, exe, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "state folder of the virtual cluster")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}
