package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/realnode"
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
		Short: "Run a local host cluster (a real node, or kwok fake nodes) for development",
		Long: `Run a local host Kubernetes cluster for development and tests.

kwokctl (runtime "binary") runs etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok-controller from the binaries that ` + "`make binaries`" + ` caches.
One real node (containerd, runc, kubelet, kube-proxy, CNI bridge) runs pods
for real where this machine allows it; kwok fake nodes give a pod an IP and
the Running phase without running any container. Beside it runs a local OCI
registry (` + "`dev registry`" + `) that ` + "`dev image`" + ` (make image) pushes clustersync's
images to and the real node pulls from.`,
	}
	cmd.AddCommand(newDevUpCommand(), newDevDownCommand(), newDevStatusCommand(), newDevEKSCommand(), newDevAKSCommand(), newDevGKECommand(), newDevRegistryCommand(), newDevImageCommand(), newDevReleaseCommand())
	return cmd
}

// Values of `dev up --runtime`.
const (
	runtimeReal = "real"
	runtimeFake = "fake"
)

// newDevUpCommand returns `clustersync dev up`.
func newDevUpCommand() *cobra.Command {
	var (
		dir, name, runtime, source string
		fakeNodes                  int
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local host cluster: control plane, registry, a real node (created if needed; idempotent)",
		Long: `Start the local host cluster, creating it when its state folder is empty.

kwokctl runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler
and kwok-controller; a local OCI registry serves images on loopback; and,
with --runtime real (the default), one real node runs on this machine:
containerd with runc, the kubelet, kube-proxy (iptables) and the CNI bridge
` + hostcluster.RealNodeBridge + `, so pods really run, and rancher's local-path-provisioner with
the default StorageClass local-path (claims become folders of the node).
The images the node and ` + "`virtual create`" + ` need are built and pushed to the
registry when it lacks them: the node's sandbox and local-path helper images
(from the source tree, --source), the rewrite-hosts image of virtual
clusters' StatefulSet pods (Debian's busybox-static, which ` + "`make binaries`" + `
fetches) and clustersync's own image, tag latest, which ` + "`virtual create`" + `
installs (about 20 seconds after ` + "`make build`" + `; ` + "`make image`" + ` rebuilds it after
a change of the source).

Where a real node cannot run (not Linux, not root, a missing cgroup
controller or program), dev up says why in one line and uses kwok fake
nodes only; --runtime fake asks for that. --fake-nodes adds kwok fake nodes
(no container runs on them) beside the real node, for scale work.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if fakeNodes < 0 {
				return fmt.Errorf("--fake-nodes must be 0 or more, not %d", fakeNodes)
			}
			opts := upOptions{dir: hostDir(dir), name: name, runtime: runtime, source: source, fakeNodes: -1, clustersyncImage: true}
			if cmd.Flags().Changed("fake-nodes") {
				opts.fakeNodes = fakeNodes
			}
			// On Ctrl-C, let Create stop kwokctl and remove a half-made cluster.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			h, err := upHost(ctx, out, opts)
			if err != nil {
				return err
			}
			c, reg := h.cluster, h.registry
			fmt.Fprintf(out, "\nKubeconfig: %s\nAPI server: %s\nRegistry:   http://%s (`make image` pushes clustersync's images after a change of the source)\n\nTo use it:\n\n  export KUBECONFIG=%s\n  kubectl get nodes\n  clustersync virtual create NAME\n",
				c.Kubeconfig, c.Server(), reg, shellQuote(c.Kubeconfig))
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&name, "name", "", fmt.Sprintf("kwokctl cluster name (default %q, or the existing cluster's)", hostcluster.DefaultName))
	cmd.Flags().StringVar(&runtime, "runtime", runtimeReal, "nodes: \"real\" (one real node, kwok fake nodes only where it cannot run) or \"fake\" (kwok fake nodes only)")
	cmd.Flags().IntVar(&fakeNodes, "fake-nodes", 0, fmt.Sprintf("number of kwok fake nodes (default 0 beside a real node, %d without; an existing cluster keeps its count unless this is given)", hostcluster.DefaultNodes))
	cmd.Flags().StringVar(&source, "source", "", "the clustersync source tree, to build the node's images and clustersync's from when the registry lacks them (default the one that holds the current folder)")
	return cmd
}

// upOptions are the inputs of upHost.
type upOptions struct {
	dir, name string
	// runtime is runtimeReal or runtimeFake.
	runtime string
	// source is the clustersync source tree ("" = the one holding the
	// current folder), for the sandbox image.
	source string
	// fakeNodes is the kwok fake node count; -1 leaves the choice to
	// upHost (an existing cluster keeps its count; 0 beside a real node,
	// hostcluster.DefaultNodes without).
	fakeNodes int
	// log receives the host cluster's progress lines; nil means out.
	log io.Writer
	// clustersyncImage pushes clustersync's image (tag latest) to the
	// registry when it lacks it (ensureImages), so that `virtual create`
	// works right after `dev up`; the demo builds it itself.
	clustersyncImage bool
}

// upped is what upHost brought up.
type upped struct {
	cluster *hostcluster.Cluster
	// registry is the local registry's host:port.
	registry string
	// realNode is true when the real node runs; else why is the reason.
	realNode bool
	why      string
}

// upHost brings the local host up as `dev up` does: the control plane
// (hostcluster.Create), the local registry, and with runtime real the
// sandbox image and the real node, falling back to kwok fake nodes with
// a one-line reason printed to out when the node cannot run.
func upHost(ctx context.Context, out io.Writer, o upOptions) (upped, error) {
	if o.runtime != runtimeReal && o.runtime != runtimeFake {
		return upped{}, fmt.Errorf("--runtime must be %q or %q, not %q", runtimeReal, runtimeFake, o.runtime)
	}
	if o.fakeNodes < -1 {
		return upped{}, fmt.Errorf("--fake-nodes must be 0 or more, not %d", o.fakeNodes)
	}
	var u upped
	real := o.runtime == runtimeReal
	if real {
		if err := realnode.Preflight(binaries.Node()); err != nil {
			u.why = err.Error()
			fmt.Fprintf(out, "No real node: %s; using kwok fake nodes only.\n", u.why)
			real = false
		}
	} else {
		u.why = "--runtime fake"
	}
	opts := hostcluster.Options{Dir: o.dir, Name: o.name, Log: out}
	if o.log != nil {
		opts.Log = o.log
	}
	_, existing := hostcluster.Open(opts.Dir)
	switch {
	case o.fakeNodes == 0:
		opts.Nodes = hostcluster.NoNodes
	case o.fakeNodes > 0:
		opts.Nodes = o.fakeNodes
	case existing == nil:
		// an existing cluster keeps its count
	case real:
		opts.Nodes = hostcluster.NoNodes
	default:
		opts.Nodes = hostcluster.DefaultNodes
	}
	c, err := hostcluster.Create(ctx, opts)
	if err != nil {
		return u, err
	}
	u.cluster = c
	if u.registry, err = launchRegistry(ctx, opts.Dir, real); err != nil {
		return u, fmt.Errorf("local registry: %w", err)
	}
	if !real {
		return u, nil
	}
	if err := ensureImages(ctx, out, o.source, u.registry, o.clustersyncImage); err != nil {
		return u, err
	}
	c.Log = opts.Log
	if err := c.StartRealNode(ctx, u.registry); err != nil {
		if ctx.Err() != nil {
			return u, err
		}
		u.why = "the real node did not start"
		fmt.Fprintf(out, "The real node did not start, so this host has kwok fake nodes only: %v\n", err)
		if c.Nodes == 0 {
			if err := c.ScaleNodes(ctx, hostcluster.DefaultNodes); err != nil {
				return u, err
			}
		}
		return u, nil
	}
	u.realNode, u.why = true, ""
	return u, nil
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
			if err := deleteHost(cmd.Context(), c); err != nil {
				return err
			}
			fmt.Fprintf(out, "Host cluster %q deleted.\n", c.Name)
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	return cmd
}

// deleteHost deletes the local host c as `dev down` does: its registry
// (and the images in it), then the cluster with its real node and state.
func deleteHost(ctx context.Context, c *hostcluster.Cluster) error {
	if err := registry.Stop(ctx, registryDir(c.Dir)); err != nil {
		return err
	}
	if err := os.RemoveAll(registryDir(c.Dir)); err != nil {
		return err
	}
	return c.Delete(ctx)
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
			switch ns, ok, err := c.RealNodeStatus(); {
			case err != nil:
				fmt.Fprintf(out, "  Real node:   %v\n", err)
			case !ok:
				fmt.Fprintf(out, "  Real node:   none (kwok fake nodes only)\n")
			default:
				fmt.Fprintf(out, "  Real node:   %s, bridge %s, pods %s: %s (logs in %s)\n", ns.Options.NodeName, ns.Options.Bridge,
					ns.Options.PodCIDR, describeComponents(ns.Components), filepath.Join(ns.Options.Dir, "logs"))
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

// describeComponents is "containerd, kubelet, kube-proxy running" or
// names those not running.
func describeComponents(up map[string]bool) string {
	var down []string
	for _, name := range slices.Sorted(maps.Keys(up)) {
		if !up[name] {
			down = append(down, name)
		}
	}
	if len(down) == 0 {
		return strings.Join(slices.Sorted(maps.Keys(up)), ", ") + " running"
	}
	return strings.Join(down, ", ") + " not running (restart with `clustersync dev up`)"
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
