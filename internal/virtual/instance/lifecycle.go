package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/runner"
)

// CreateOptions describe a new virtual cluster.
type CreateOptions struct {
	// Home is the clustersync state folder (see Home).
	Home string
	Name string
	// HostNamespace defaults to "vc-<name>".
	HostNamespace string
	// HostKubeconfig is the host cluster's kubeconfig file.
	HostKubeconfig string
	// ConfigFile is an optional configuration file (package config); its
	// content is validated and copied into the state folder.
	ConfigFile string
}

// Create validates o, prepares the host namespace and the state folder, and
// starts the virtual cluster with exe (the clustersync binary). It fails if
// a virtual cluster of that name exists already.
func Create(ctx context.Context, o CreateOptions, exe string) (*Instance, error) {
	if err := ValidateName(o.Name); err != nil {
		return nil, err
	}
	if o.HostNamespace == "" {
		o.HostNamespace = DefaultHostNamespace(o.Name)
	}
	dir := Path(o.Home, o.Name)
	if _, err := os.Stat(filepath.Join(dir, "instance.json")); err == nil {
		return nil, fmt.Errorf("virtual cluster %q exists already (%s); use `clustersync virtual start %s` or delete it first", o.Name, dir, o.Name)
	}
	cfgData := []byte("{}\n")
	if o.ConfigFile != "" {
		cfg, err := config.Load(o.ConfigFile)
		if err != nil {
			return nil, err
		}
		if err := runner.CheckConfig(cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", o.ConfigFile, err)
		}
		data, err := os.ReadFile(o.ConfigFile)
		if err != nil {
			return nil, err
		}
		cfgData = data
	}
	kubeconfig, err := filepath.Abs(o.HostKubeconfig)
	if err != nil {
		return nil, err
	}
	hostCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("host kubeconfig %s: %w", kubeconfig, err)
	}
	host, err := kubernetes.NewForConfig(hostCfg)
	if err != nil {
		return nil, err
	}
	created, err := EnsureNamespace(ctx, host, o.HostNamespace, nil)
	if err != nil {
		return nil, err
	}
	cidr, err := controlplane.DetectServiceCIDR(ctx, host, o.HostNamespace)
	if err != nil {
		return nil, err
	}
	i := &Instance{Dir: dir, State: State{
		Name: o.Name, HostNamespace: o.HostNamespace, HostKubeconfig: kubeconfig, ServiceCIDR: cidr,
		CreatedNamespace: created, Created: time.Now().UTC(),
	}}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(i.ConfigFile(), cfgData, 0o600); err != nil {
		return nil, err
	}
	if err := i.save(); err != nil {
		return nil, err
	}
	return i, i.Start(ctx, exe)
}

// Start launches the supervisor of a stopped virtual cluster as a detached
// process of exe and waits (up to 3 minutes) until it reports ready. A
// running one is left as it is.
func (i *Instance) Start(ctx context.Context, exe string) error {
	if st, ok := i.Status(); ok && st.Ready {
		return nil
	}
	_ = os.Remove(i.statusFile())
	if err := os.MkdirAll(filepath.Join(i.Dir, "logs"), 0o700); err != nil {
		return err
	}
	return proc.StartDetached(ctx, "virtual cluster "+i.Name, exe, []string{"virtual", "serve", "--dir", i.Dir}, i.Log("serve"),
		func() bool { st, ok := i.Status(); return ok && st.Ready }, 3*time.Minute)
}

// Stop ends the supervisor (which stops the syncer, kube-apiserver,
// kube-controller-manager and etcd) and waits up to a minute for it.
func (i *Instance) Stop(ctx context.Context) error {
	st, ok := i.Status()
	if !ok {
		return nil
	}
	if err := proc.StopPID(ctx, "virtual cluster "+i.Name, st.PID, time.Minute); err != nil {
		return err
	}
	_ = os.Remove(i.statusFile())
	return nil
}

// Delete stops the virtual cluster, deletes every host object it created
// (and the host namespace if it created that), and removes its state folder.
func (i *Instance) Delete(ctx context.Context) error {
	if err := i.Stop(ctx); err != nil {
		return err
	}
	hostCfg, err := i.HostConfig()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(hostCfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(hostCfg)
	if err != nil {
		return err
	}
	if err := DeleteHostObjects(ctx, disc, dyn, i.HostNamespace, i.Name, 2*time.Minute); err != nil {
		return err
	}
	if i.CreatedNamespace {
		host, err := kubernetes.NewForConfig(hostCfg)
		if err != nil {
			return err
		}
		if err := deleteNamespaceIfEmpty(ctx, host, i.HostNamespace); err != nil {
			return err
		}
	}
	return os.RemoveAll(i.Dir)
}

// HostConfig is a REST config for the host cluster.
func (i *Instance) HostConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", i.HostKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("host kubeconfig %s: %w", i.HostKubeconfig, err)
	}
	// Deleting v1 Endpoints draws a deprecation warning per call.
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	return cfg, nil
}
