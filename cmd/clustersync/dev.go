package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/virtual/instance"
)

// stateHome is clustersync's state folder on this machine: $CLUSTERSYNC_HOME,
// else ~/.clustersync.
func stateHome() string { return instance.Home() }

// defaultHostDir is the state folder of the local host cluster of
// `clustersync dev`.
func defaultHostDir() string {
	return filepath.Join(stateHome(), "host")
}

// addDirFlag adds --dir, the host cluster's state folder, to cmd.
func addDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", "", "state folder of the host cluster (default $CLUSTERSYNC_HOME/host, CLUSTERSYNC_HOME being ~/.clustersync unless set)")
}

// hostDir is the --dir value, or defaultHostDir when it is empty.
func hostDir(dir string) string {
	if dir == "" {
		return defaultHostDir()
	}
	return dir
}

// newDevCommand returns `clustersync dev`, which runs a local host cluster
// for development: a real API server with fake kwok nodes, started by kwokctl
// from the cached binaries.
func newDevCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local host cluster (kwok) for development",
		Long: `Run a local host Kubernetes cluster for development and tests.

kwokctl (runtime "binary") runs etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok-controller from the binaries that ` + "`make binaries`" + ` caches.
Its nodes are fake: kwok gives every pod scheduled on one an IP and the Running
phase, without running any container. Beside it runs a local OCI registry
(` + "`dev registry`" + `) that ` + "`dev image`" + ` (make image) pushes clustersync's images to.`,
	}
	cmd.AddCommand(newDevUpCommand(), newDevDownCommand(), newDevStatusCommand(), newDevEKSCommand(), newDevRegistryCommand(), newDevImageCommand())
	return cmd
}

// newDevUpCommand returns `clustersync dev up`.
func newDevUpCommand() *cobra.Command {
	var (
		dir, name string
		nodes     int
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local host cluster (created if needed; idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			opts := hostcluster.Options{Dir: hostDir(dir), Name: name, Log: out}
			if cmd.Flags().Changed("nodes") {
				switch {
				case nodes < 0:
					return fmt.Errorf("--nodes must be 0 or more, not %d", nodes)
				case nodes == 0:
					opts.Nodes = hostcluster.NoNodes
				default:
					opts.Nodes = nodes
				}
			}
			// On Ctrl-C, let Create stop kwokctl and remove a half-made cluster.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := hostcluster.Create(ctx, opts)
			if err != nil {
				return err
			}
			reg, err := startRegistry(cmd, opts.Dir)
			if err != nil {
				return fmt.Errorf("local registry: %w", err)
			}
			fmt.Fprintf(out, "\nKubeconfig: %s\nAPI server: %s\nRegistry:   http://%s (push clustersync's images with `make image`)\n\nTo use it:\n\n  export KUBECONFIG=%s\n  kubectl get nodes\n",
				c.Kubeconfig, c.Server(), reg, shellQuote(c.Kubeconfig))
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&name, "name", "", fmt.Sprintf("kwokctl cluster name (default %q, or the existing cluster's)", hostcluster.DefaultName))
	cmd.Flags().IntVar(&nodes, "nodes", hostcluster.DefaultNodes, "number of fake nodes, 0 for none (an existing cluster keeps its count unless this is given)")
	return cmd
}

// newDevDownCommand returns `clustersync dev down`.
func newDevDownCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop and delete the local host cluster, its registry and their state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			d := hostDir(dir)
			c, err := hostcluster.Open(d)
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(out, "No host cluster in %s: nothing to delete.\n", d)
				return nil
			}
			if err != nil {
				return err
			}
			c.Log = out
			if err := registry.Stop(cmd.Context(), registryDir(d)); err != nil {
				return err
			}
			if err := os.RemoveAll(registryDir(d)); err != nil {
				return err
			}
			if err := c.Delete(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(out, "Host cluster %q deleted.\n", c.Name)
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	return cmd
}

// newDevStatusCommand returns `clustersync dev status`.
func newDevStatusCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the local host cluster runs, its kubeconfig, API server and nodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			d := hostDir(dir)
			c, err := hostcluster.Open(d)
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(out, "No host cluster in %s. Start one with `clustersync dev up`.\n", d)
				return nil
			}
			if err != nil {
				return err
			}
			s := c.Status(cmd.Context())
			fmt.Fprintf(out, "Host cluster %q in %s: %s\n", c.Name, c.Dir, describeStatus(s))
			fmt.Fprintf(out, "  Kubeconfig:  %s\n", c.Kubeconfig)
			fmt.Fprintf(out, "  API server:  %s\n", orDash(c.Server()))
			if s.APIReady {
				fmt.Fprintf(out, "  Nodes:       %d (%d Ready)\n", s.Nodes, s.ReadyNodes)
			} else {
				fmt.Fprintf(out, "  Nodes:       %d wanted (unknown while the API server is not ready)\n", c.Nodes)
			}
			if st, ok := registry.Running(registryDir(d)); ok {
				fmt.Fprintf(out, "  Registry:    http://%s (pid %d)\n", st.Addr, st.PID)
			} else {
				fmt.Fprintf(out, "  Registry:    not running (start it with `clustersync dev up`)\n")
			}
			fmt.Fprintf(out, "  Logs:        %s\n", filepath.Join(c.KwokDir(), "logs"))
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	return cmd
}

// describeStatus says in a few words how the cluster is.
func describeStatus(s hostcluster.Status) string {
	var up, down []string
	for _, name := range slices.Sorted(maps.Keys(s.Components)) {
		if s.Components[name] {
			up = append(up, name)
		} else {
			down = append(down, name)
		}
	}
	switch {
	case s.Running():
		return "running"
	case len(up) == 0:
		return "stopped (start it with `clustersync dev up`)"
	case len(down) > 0:
		return "not healthy: " + strings.Join(down, ", ") + " not running (restart it with `clustersync dev up`)"
	default:
		return fmt.Sprintf("not ready: API server: %v", s.APIError)
	}
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shellQuote quotes p for a POSIX shell when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
