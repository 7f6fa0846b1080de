package hostcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/ports"
)

const (
	// DefaultName is the kwokctl cluster name used when Options.Name is empty.
	DefaultName = "clustersync-host"
	// DefaultNodes is the number of fake nodes a new cluster gets when
	// Options.Nodes is 0.
	DefaultNodes = 3
	// NoNodes, as Options.Nodes, asks for a cluster without any node (pods
	// then stay Pending).
	NoNodes = -1
	// DefaultServiceCIDR is the Service cluster IP range used when
	// Options.ServiceCIDR is empty. kwokctl's own default, 10.0.0.0/24, is
	// too small and overlaps the pod IPs that kwok hands out (10.0.x.x).
	DefaultServiceCIDR = "10.96.0.0/16"
	// DefaultTimeout bounds Create, Start and ScaleNodes when
	// Options.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
)

// Options configures Create. Only Dir is required.
type Options struct {
	// Name is the kwokctl cluster name; DefaultName when empty. When Dir
	// already holds a cluster, an empty Name means that cluster's name and
	// a different one is an error.
	Name string
	// Dir is the state folder (see the package documentation). It is
	// created if needed and made absolute.
	Dir string
	// Nodes is the number of fake nodes: 0 means DefaultNodes for a new
	// cluster and the current count for an existing one, NoNodes means none,
	// and any other value scales the cluster to it.
	Nodes int
	// ServiceCIDR is the Service cluster IP range; DefaultServiceCIDR when
	// empty. It is fixed when the cluster is created: an existing cluster
	// with another range is an error.
	ServiceCIDR string
	// ExtraArgs are passed to `kwokctl create cluster` as --extra-args, each
	// in the form component=flag=value, e.g.
	// "kube-apiserver=feature-gates=Foo=true". They only apply when the
	// cluster is created.
	ExtraArgs []string
	// Binaries are the programs to run; binaries.Default() when zero.
	Binaries binaries.Set
	// Log receives progress lines ("Starting host cluster …", "3 nodes
	// Ready"); nil discards them.
	Log io.Writer
	// Timeout bounds the whole of Create, readiness included, and later calls
	// of Start and ScaleNodes on the returned Cluster; DefaultTimeout when 0.
	Timeout time.Duration
	// Ports is the port registry the components' ports are leased from;
	// the machine's (ports.Default()) when nil.
	Ports *ports.Registry
}

// Cluster is a host cluster that kwokctl runs from a state folder.
type Cluster struct {
	// Name is the kwokctl cluster name.
	Name string
	// Dir is the absolute state folder.
	Dir string
	// Kubeconfig is the admin kubeconfig file, Dir/kubeconfig.yaml.
	Kubeconfig string
	// ServiceCIDR is the Service cluster IP range.
	ServiceCIDR string
	// Nodes is the number of fake nodes the cluster is meant to have.
	Nodes int
	// Config is the admin client configuration; nil only for a cluster
	// that Open found without a kubeconfig (its creation failed half-way).
	Config *rest.Config
	// Log receives progress lines of the Cluster's methods; io.Discard when
	// opened with Open.
	Log io.Writer
	// Timeout bounds Start and ScaleNodes (DefaultTimeout after Open).
	Timeout time.Duration

	kwokctl string // the kwokctl binary
	ports   *ports.Registry
}

// Create starts the host cluster in opts.Dir and returns it once the API
// server is ready, the nodes are Ready and the default ServiceAccount exists.
//
// It is idempotent: a cluster that already runs in Dir is reused (and scaled
// when opts.Nodes asks for another count), a stopped one is started with
// `kwokctl start cluster`, and only an empty Dir gets a new cluster from
// `kwokctl create cluster`. When a new cluster fails to come up, Create
// deletes it again; a stopped one that fails to start is stopped again. The
// error then names the step or kwokctl command that failed, with the end of
// kwokctl's output and of the log of the component that exited. Missing
// binaries are reported by binaries.Set.Check before anything runs.
//
// The components' ports are leased to Dir from the machine's port registry
// (package ports) before kwokctl creates the cluster, and stay its own until
// Delete, also while it is stopped: parallel test packages may each Create
// their own cluster, and a stopped cluster starts again on its ports. A
// cluster created before the registry keeps the ports kwokctl gave it,
// leased to it when it starts.
func Create(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("hostcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("hostcluster: %w", err)
	}
	if opts.Binaries == (binaries.Set{}) {
		opts.Binaries = binaries.Default()
	}
	if err := opts.Binaries.Check(); err != nil {
		return nil, err
	}
	if opts.Nodes < NoNodes {
		return nil, fmt.Errorf("hostcluster: invalid node count %d", opts.Nodes)
	}
	if opts.ServiceCIDR != "" {
		if _, _, err := net.ParseCIDR(opts.ServiceCIDR); err != nil {
			return nil, fmt.Errorf("hostcluster: invalid service CIDR: %w", err)
		}
	}

	st, err := readState(dir)
	exists := err == nil
	switch {
	case exists:
		if opts.Name != "" && opts.Name != st.Name {
			return nil, fmt.Errorf("hostcluster: %s holds host cluster %q, not %q: use another folder or delete it first", dir, st.Name, opts.Name)
		}
		if opts.ServiceCIDR != "" && opts.ServiceCIDR != st.ServiceCIDR {
			return nil, fmt.Errorf("hostcluster: host cluster %q in %s has service CIDR %s, not %s: delete it first to change it", st.Name, dir, st.ServiceCIDR, opts.ServiceCIDR)
		}
	case errors.Is(err, fs.ErrNotExist):
		st = state{Name: opts.Name, ServiceCIDR: opts.ServiceCIDR, Nodes: DefaultNodes}
		if st.Name == "" {
			st.Name = DefaultName
		}
		if st.ServiceCIDR == "" {
			st.ServiceCIDR = DefaultServiceCIDR
		}
	default:
		return nil, err
	}
	if opts.Nodes != 0 {
		st.Nodes = max(opts.Nodes, 0)
	}
	st.Kwokctl = opts.Binaries.Kwokctl

	c := newCluster(dir, st)
	if opts.Log != nil {
		c.Log = opts.Log
	}
	if opts.Timeout > 0 {
		c.Timeout = opts.Timeout
	}
	if opts.Ports != nil {
		c.ports = opts.Ports
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hostcluster: %w", err)
	}
	if err := c.saveState(); err != nil {
		return nil, err
	}
	var create []string
	if !c.kwokClusterExists() {
		p, err := c.reservePorts(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.writeKwokctlConfig(p); err != nil {
			return nil, err
		}
		create = c.createArgs(opts.Binaries, opts.ExtraArgs)
	} else if err := c.holdPorts(ctx); err != nil {
		return nil, err
	}
	if err := c.up(ctx, create); err != nil {
		return nil, err
	}
	return c, nil
}

// Open returns the cluster kept in the state folder dir without starting or
// checking it, e.g. to stop, delete or inspect it. An error wrapping
// fs.ErrNotExist means dir holds no host cluster.
func Open(dir string) (*Cluster, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("hostcluster: %w", err)
	}
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(st.Kwokctl); st.Kwokctl == "" || err != nil {
		st.Kwokctl = binaries.Default().Kwokctl // e.g. after the cache was rebuilt elsewhere
	}
	c := newCluster(dir, st)
	if err := c.loadConfig(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return c, nil
}

func newCluster(dir string, st state) *Cluster {
	return &Cluster{
		Name:        st.Name,
		Dir:         dir,
		Kubeconfig:  filepath.Join(dir, "kubeconfig.yaml"),
		ServiceCIDR: st.ServiceCIDR,
		Nodes:       st.Nodes,
		Log:         io.Discard,
		Timeout:     DefaultTimeout,
		kwokctl:     st.Kwokctl,
		ports:       ports.Default(),
	}
}

// Server is the API server URL, e.g. https://127.0.0.1:20002, or "" when
// Config is nil.
func (c *Cluster) Server() string {
	if c.Config == nil {
		return ""
	}
	return c.Config.Host
}

// KwokDir is the folder kwokctl keeps the cluster in,
// Dir/kwok/clusters/NAME, with the components' logs/ and pids/.
func (c *Cluster) KwokDir() string {
	return filepath.Join(c.kwokWorkdir(), "clusters", c.Name)
}

func (c *Cluster) kwokWorkdir() string { return filepath.Join(c.Dir, "kwok") }

func (c *Cluster) kwokClusterExists() bool {
	_, err := os.Stat(filepath.Join(c.KwokDir(), "kwok.yaml"))
	return err == nil
}

// loadConfig reads Config from the kubeconfig kwokctl keeps for itself, which
// a user's edits of Dir/kubeconfig.yaml cannot change.
func (c *Cluster) loadConfig() error {
	path := filepath.Join(c.KwokDir(), "kubeconfig.yaml")
	if _, err := os.Stat(path); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("hostcluster: kubeconfig %s: %w", path, err)
	}
	c.Config = cfg
	return nil
}

// Start starts a stopped cluster (`kwokctl start cluster`) and waits until
// it is ready as Create does; a running one is only checked. If it fails, the
// components it started are stopped again.
func (c *Cluster) Start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if !c.kwokClusterExists() {
		return fmt.Errorf("hostcluster: host cluster %q in %s was never created (its creation failed); delete it and create it again", c.Name, c.Dir)
	}
	if err := c.holdPorts(ctx); err != nil {
		return err
	}
	return c.up(ctx, nil)
}

// up brings the cluster up: with create, a new cluster from `kwokctl create
// cluster` (deleted again on failure), else the existing one, started when
// any component is not running (stopped again on failure). It then waits for
// the API server, scales to c.Nodes, waits for the nodes and the default
// ServiceAccount and saves the state.
func (c *Cluster) up(ctx context.Context, create []string) (err error) {
	begin := time.Now()
	startedHere := false
	switch {
	case create != nil:
		fmt.Fprintf(c.Log, "Creating host cluster %q in %s (kwokctl, runtime binary)…\n", c.Name, c.Dir)
		startedHere = true
		err = c.runUp(ctx, create, kwokctlGrace)
	case c.allRunning():
		fmt.Fprintf(c.Log, "Host cluster %q is already running\n", c.Name)
	default:
		fmt.Fprintf(c.Log, "Starting host cluster %q in %s…\n", c.Name, c.Dir)
		startedHere = true
		err = c.startCluster(ctx)
	}
	defer func() {
		if err == nil || !startedHere {
			return
		}
		// Leave no processes behind; the error already carries the logs.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if create != nil {
			fmt.Fprintf(c.Log, "Creation failed; deleting host cluster %q again\n", c.Name)
			_ = c.uninstall(cctx)
		} else {
			fmt.Fprintf(c.Log, "Start failed; stopping host cluster %q again\n", c.Name)
			_ = c.stop(cctx)
		}
	}()
	if err != nil {
		return err
	}
	if err := c.loadConfig(); err != nil {
		return fmt.Errorf("hostcluster: %w", err)
	}
	if err := c.ensureKubeconfig(); err != nil {
		return err
	}
	if err := c.waitAPI(ctx); err != nil {
		return err
	}
	fmt.Fprintf(c.Log, "API server ready at %s\n", c.Server())
	if err := c.scale(ctx, c.Nodes); err != nil {
		return err
	}
	if err := c.waitDefaultServiceAccount(ctx); err != nil {
		return err
	}
	if err := c.saveState(); err != nil {
		return err
	}
	fmt.Fprintf(c.Log, "Host cluster %q ready (%s)\n", c.Name, time.Since(begin).Round(100*time.Millisecond))
	return nil
}

// ensureKubeconfig puts back Dir/kubeconfig.yaml when it was removed.
func (c *Cluster) ensureKubeconfig() error {
	if _, err := os.Stat(c.Kubeconfig); err == nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(c.KwokDir(), "kubeconfig.yaml"))
	if err == nil {
		err = os.WriteFile(c.Kubeconfig, data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("hostcluster: kubeconfig: %w", err)
	}
	return nil
}

// ScaleNodes sets the number of fake nodes to n (NoNodes or 0 for none) and
// waits until exactly n are Ready.
func (c *Cluster) ScaleNodes(ctx context.Context, n int) error {
	if n < NoNodes {
		return fmt.Errorf("hostcluster: invalid node count %d", n)
	}
	n = max(n, 0)
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if err := c.scale(ctx, n); err != nil {
		return err
	}
	c.Nodes = n
	return c.saveState()
}

func (c *Cluster) scale(ctx context.Context, n int) error {
	if c.Config == nil {
		if err := c.loadConfig(); err != nil {
			return fmt.Errorf("hostcluster: %w", err)
		}
	}
	if err := c.run(ctx, append(c.args("scale", "node"), "--replicas", fmt.Sprint(n))); err != nil {
		return err
	}
	if err := c.waitNodes(ctx, n); err != nil {
		return err
	}
	fmt.Fprintf(c.Log, "%s Ready\n", plural(n, "node"))
	return nil
}

// Stop tears down the real node, if any (StopRealNode: a node's pods do
// not survive it), stops the cluster's processes (`kwokctl stop cluster`)
// and waits until they have exited. Its state stays for Start.
func (c *Cluster) Stop(ctx context.Context) error {
	fmt.Fprintf(c.Log, "Stopping host cluster %q…\n", c.Name)
	return c.stop(ctx)
}

func (c *Cluster) stop(ctx context.Context) error {
	// The control plane stops even when the node's teardown failed; the
	// error then says what of the node is left.
	nodeErr := c.StopRealNode(ctx)
	pids := c.pids()
	if err := c.run(ctx, c.args("stop", "cluster")); err != nil {
		return errors.Join(nodeErr, err)
	}
	return errors.Join(nodeErr, c.waitExited(ctx, pids))
}

// Delete tears down the real node, if any (StopRealNode), deletes the
// cluster (`kwokctl delete cluster`), waits until its
// processes have exited and removes the files it kept in Dir, then Dir itself
// unless something else was put there.
func (c *Cluster) Delete(ctx context.Context) error {
	fmt.Fprintf(c.Log, "Deleting host cluster %q in %s…\n", c.Name, c.Dir)
	if err := c.uninstall(ctx); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(c.Dir, "kwokctl.log")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hostcluster: %w", err)
	}
	if err := os.Remove(c.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.Log, "Left %s in place: %v\n", c.Dir, err)
	}
	return nil
}

// uninstall deletes the kwokctl cluster and every file of Dir but
// kwokctl.log.
func (c *Cluster) uninstall(ctx context.Context) error {
	// As in stop, a failed node teardown does not keep the control plane
	// running; the node's state folder then stays for another try.
	if err := c.StopRealNode(ctx); err != nil {
		if derr := c.deleteControlPlane(ctx); derr != nil {
			return errors.Join(err, derr)
		}
		return err
	}
	return c.deleteControlPlane(ctx)
}

// deleteControlPlane deletes the kwokctl cluster and every file of Dir but
// kwokctl.log and the real node's folder.
func (c *Cluster) deleteControlPlane(ctx context.Context) error {
	pids := c.pids()
	p, err := c.componentPorts()
	if err != nil {
		return err
	}
	if c.kwokClusterExists() {
		args := append(c.args("delete", "cluster"), "--kubeconfig", c.Kubeconfig)
		if err := c.run(ctx, args); err != nil {
			return err
		}
	}
	if err := c.waitExited(ctx, pids); err != nil {
		return err
	}
	// The ports go back to the registry once the kernel has released
	// them, so that the next cluster can bind them.
	for _, port := range p.all() {
		if err := ports.WaitReleased(ctx, port, pids...); err != nil {
			return fmt.Errorf("hostcluster: host cluster %q deleted, but %w", c.Name, err)
		}
	}
	if err := c.ports.Release(ctx, c.Dir); err != nil {
		return fmt.Errorf("hostcluster: %w", err)
	}
	for _, p := range []string{c.kwokWorkdir(), c.Kubeconfig, c.kwokctlConfigPath(), c.statePath()} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("hostcluster: %w", err)
		}
	}
	c.Config = nil
	return nil
}

// plural is "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
