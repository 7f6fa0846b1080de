package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/apps"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
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
	var namespace, hostNS, hostKubeconfig string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a virtual cluster's state, its apps, and a namespace's objects next to their host copies",
		Long: `Show the state of virtual cluster NAME, then each Pod, Service, ConfigMap, Secret
and PersistentVolumeClaim of a virtual namespace (-n, default "default") next
to its host copy (or "not synced"), as ` + "`make run`" + ` does.

For a virtual cluster installed in a host (the chart), the state is its
control plane's (as ` + "`virtual list`" + ` shows it) and the progress of
experimental.deploy.vcluster: the manifests, and each chart's release with
its phase and, when it failed, the reason and error (the syncer keeps it in
annotation clustersync.io/deploy-status of the control plane pod; events
DeployApplied and DeployFailed of that pod tell its history). The objects are
read through the first address of the API server this machine reaches.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if i, err := instance.Load(stateHome(), args[0]); err == nil {
				if _, ok := i.Status(); !ok {
					return errors.New(stoppedHint(i.Name))
				}
				vc, hc, err := instanceClients(i)
				if err != nil {
					return err
				}
				return printNamespace(cmd.Context(), out, i.Name, i.HostNamespace, vc, hc, namespace)
			}
			name, ns := args[0], hostNamespace(args[0], hostNS)
			if hostKubeconfig == "" {
				hostKubeconfig = defaultHostKubeconfig()
			}
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			return printHostStatus(cmd.Context(), out, host, name, ns, namespace)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "virtual namespace to show")
	cmd.Flags().StringVar(&hostNS, "host-namespace", "", "host namespace of a virtual cluster installed in a host (default vc-NAME)")
	cmd.Flags().StringVar(&hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	return cmd
}

// printHostStatus prints the state of virtual cluster name installed in
// host namespace ns, its apps, and virtual namespace vns's objects next to
// their host copies.
func printHostStatus(ctx context.Context, out io.Writer, host *hostConn, name, ns, vns string) error {
	in, err := deploy.Get(ctx, host.client, host.helm, name, ns)
	if err != nil {
		return err
	}
	line := in.Status
	if in.Reason != "" {
		line += " (" + in.Reason + ")"
	}
	fmt.Fprintf(out, "Virtual cluster %s in host namespace %s: %s, clustersync %s, chart %s.\n", name, ns, line, in.Version, in.Chart)
	if st, ok, err := deploy.AppsStatus(ctx, host.client, name, ns); err != nil {
		return err
	} else if ok {
		fmt.Fprintf(out, "\nApps (experimental.deploy.vcluster): %s\n", st.Summary())
		fmt.Fprintf(out, "  manifests: %s\n", phaseLine(st.Manifests.Phase, st.Manifests.Reason, st.Manifests.Message))
		for _, c := range st.Charts {
			fmt.Fprintf(out, "  release %s/%s: %s\n", c.Namespace, c.Name, phaseLine(c.Phase, c.Reason, c.Message))
		}
	}
	servers, err := deploy.Servers(ctx, host.client, name, ns)
	if err != nil {
		return err
	}
	server := deploy.FirstReachable(ctx, servers, 5*time.Second)
	if server == "" {
		fmt.Fprintf(out, "\nThis machine reaches the API server at none of %s; `clustersync virtual connect %s -n %s` connects through a port-forward.\n", strings.Join(servers, ", "), name, ns)
		return nil
	}
	kc, err := deploy.Kubeconfig(ctx, host.client, name, ns, server)
	if err != nil {
		return err
	}
	vcfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return err
	}
	vc, err := client.New(vcfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	hc, err := client.New(host.config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	return printNamespace(ctx, out, name, ns, vc, hc, vns)
}

// phaseLine is a phase, with its reason and message when it failed.
func phaseLine(phase, reason, message string) string {
	if phase == "" {
		phase = apps.PhasePending
	}
	if reason == "" {
		return phase
	}
	return phase + ": " + reason + ": " + message
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
