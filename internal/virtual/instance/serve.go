package instance

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// Serve is the supervisor of a virtual cluster: it starts the control plane
// (embedded etcd in this process, kube-apiserver, kube-controller-manager),
// then the syncer as a child process of exe, writes serve.json when all are
// ready, restarts the syncer whenever it dies (also when it dies again while
// starting: it never gives up while the control plane runs; pauses grow from
// 1 s to a minute), and stops everything when ctx ends.
// Progress goes to log.
func Serve(ctx context.Context, dir, exe string, log io.Writer) error {
	i, err := Load(filepath.Dir(filepath.Dir(dir)), filepath.Base(dir))
	if err != nil {
		return err
	}
	cfg, err := config.Load(i.ConfigFile())
	if err != nil {
		return err
	}
	opts := controlplane.Options{Dir: i.ControlPlaneDir(), Name: i.Name, ServiceCIDR: i.ServiceCIDR, Binaries: binaries.Default(),
		Scheduler: cfg.VirtualScheduler(), ExtraArgs: controlplane.ExtraArgsOf(cfg)}
	if ext := cfg.ControlPlane.BackingStore.Etcd.External; ext.Enabled {
		opts.Etcd = &controlplane.ExternalEtcd{Endpoints: []string{ext.Endpoint}, TLS: controlplane.EtcdTLS{
			CAFile: ext.TLS.CAFile, CertFile: ext.TLS.CertFile, KeyFile: ext.TLS.KeyFile,
		}}
	}
	fmt.Fprintf(log, "%s starting control plane of %s\n", now(), i.Name)
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	fmt.Fprintf(log, "%s control plane ready at https://127.0.0.1:%d\n", now(), cp.Ports.APIServer)

	syncerDir, err := filepath.Abs(filepath.Join(i.Dir, "syncer"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(syncerDir, 0o700); err != nil {
		return err
	}
	// The syncer's health port, the same across its restarts.
	port, err := ports.Default().Ensure(ctx, syncerDir, 1)
	if err != nil {
		return err
	}
	health := fmt.Sprintf("127.0.0.1:%d", port[0])
	args := []string{"syncer", "--name", i.Name, "--host-namespace", i.HostNamespace,
		"--virtual-kubeconfig", i.Kubeconfig(), "--host-kubeconfig", i.HostKubeconfig,
		"--config", i.ConfigFile(), "--state-dir", syncerDir, "--health-addr", health}
	startSyncer := func() (*proc.Process, error) {
		p, err := proc.Start("syncer", exe, args, i.Log("syncer"), nil)
		if err != nil {
			return nil, err
		}
		if err := p.WaitReady(ctx, 2*time.Minute, func(ctx context.Context) error { return proc.HTTPOK(ctx, nil, "http://"+health+"/readyz") }); err != nil {
			p.Stop(5 * time.Second)
			return nil, err
		}
		return p, nil
	}
	syncer, err := startSyncer()
	if err != nil {
		return err
	}
	status := Status{PID: os.Getpid(), SyncerPID: syncer.PID(), HealthAddr: health,
		APIServer: fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.APIServer), Ready: true}
	if err := i.writeStatus(status); err != nil {
		return err
	}
	defer os.Remove(i.statusFile())
	fmt.Fprintf(log, "%s syncer ready (pid %d); virtual cluster %s is running\n", now(), syncer.PID(), i.Name)

	cpFailed := make(chan error, 1)
	go func() { cpFailed <- cp.Wait(ctx) }()
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(log, "%s stopping\n", now())
			syncer.Stop(15 * time.Second)
			return nil
		case err := <-cpFailed:
			syncer.Stop(15 * time.Second)
			return fmt.Errorf("control plane failed: %w", err)
		case <-syncer.Done():
			fmt.Fprintf(log, "%s %v\nrestarting the syncer in %s\n", now(), syncer.ExitError(), backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Minute)
			// A syncer that dies again while starting is retried with the
			// same growing pause; the control plane stays up meanwhile.
			for syncer, err = startSyncer(); err != nil; syncer, err = startSyncer() {
				fmt.Fprintf(log, "%s syncer did not start: %v\nretrying in %s\n", now(), err, backoff)
				select {
				case <-ctx.Done():
					return nil
				case err := <-cpFailed:
					return fmt.Errorf("control plane failed: %w", err)
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Minute)
			}
			status.SyncerPID = syncer.PID()
			if err := i.writeStatus(status); err != nil {
				return err
			}
		}
	}
}

func now() string { return time.Now().Format(time.RFC3339) }
