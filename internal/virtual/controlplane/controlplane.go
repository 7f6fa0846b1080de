package controlplane

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/proc"
)

// EtcdTLS names the client certificate files for an etcd server.
type EtcdTLS struct {
	CAFile, CertFile, KeyFile string
}

// ExternalEtcd is an etcd cluster the control plane stores its objects in
// instead of the embedded one.
type ExternalEtcd struct {
	// Endpoints are the client URLs, e.g. "https://127.0.0.1:2379".
	Endpoints []string
	TLS       EtcdTLS
}

// Options configure a control plane.
type Options struct {
	// Dir is the state folder (created when missing).
	Dir string
	// Name is the virtual cluster's name; it appears in certificates.
	Name string
	// ServiceCIDR is the virtual cluster's service IP range. It must equal the
	// host's, so that virtual Services can take the clusterIP of their host copy.
	ServiceCIDR string
	// Binaries locates kube-apiserver and kube-controller-manager.
	Binaries binaries.Set
	// Etcd, when set, replaces the embedded etcd.
	Etcd *ExternalEtcd
	// BindAddress is where kube-apiserver and kube-controller-manager
	// listen; "" means 127.0.0.1.
	BindAddress string
	// AdvertiseAddress is the IP kube-apiserver advertises; "" means
	// 127.0.0.1.
	AdvertiseAddress string
	// Ports is the registry the ports are leased from; the machine's
	// (ports.Default()) when nil.
	Ports *ports.Registry
	// Scheduler runs kube-scheduler too (the virtual scheduler,
	// controlPlane.advanced.virtualScheduler.enabled).
	Scheduler bool
	// ExtraArgs are flags added to the components' own (CheckExtraArgs
	// tells which may be).
	ExtraArgs ExtraArgs
}

// Ports are the loopback ports a control plane listens on, chosen at first
// start and kept in the state folder so the tenant's kubeconfig stays valid.
type Ports struct {
	APIServer         int `json:"apiServer"`
	Etcd              int `json:"etcd"`
	EtcdPeer          int `json:"etcdPeer"`
	ControllerManager int `json:"controllerManager"`
	// Scheduler is kube-scheduler's; chosen when first needed (a state
	// folder from before the virtual scheduler has none).
	Scheduler int `json:"scheduler,omitempty"`
}

// ControlPlane is a running virtual control plane.
type ControlPlane struct {
	// Layout names the files of the state folder.
	Layout Layout
	// Ports are the ports in use.
	Ports Ports
	// Config is a cluster-admin REST config for the API server.
	Config *rest.Config

	etcd  *embed.Etcd
	procs []*proc.Process
}

// Start starts (or restarts, from the state in o.Dir) the control plane and
// returns once the API server answers /readyz and the controller manager
// (and, with o.Scheduler, kube-scheduler) /healthz. A component that fails to start yields an error with the last
// lines of its log; whatever had started is stopped again.
//
// Ports are leased to the state folder from o.Ports (the machine's port
// registry by default) when first needed and kept in it, leased for as
// long as the folder exists, so a restart gets them back and no other
// local server is handed them meanwhile. A port another process has taken
// is an error naming that process.
func Start(ctx context.Context, o Options) (_ *ControlPlane, err error) {
	l := Layout{Dir: o.Dir}
	if o.ServiceCIDR == "" {
		return nil, errors.New("controlplane: ServiceCIDR is required")
	}
	if o.Ports == nil {
		o.Ports = ports.Default()
	}
	if err := os.MkdirAll(filepath.Dir(l.Log("x")), 0o700); err != nil {
		return nil, err
	}
	p, err := loadOrChoosePorts(ctx, l, o.Ports)
	if err != nil {
		return nil, err
	}
	cp, err := startComponents(ctx, o, l, p)
	if err != nil {
		if why := o.Ports.ExplainInUse(err.Error()); len(why) > 0 {
			err = fmt.Errorf("%w\n%s", err, strings.Join(why, "\n"))
		}
	}
	return cp, err
}

// startComponents starts the components on ports (free: see
// loadOrChoosePorts) and waits until each is ready.
func startComponents(ctx context.Context, o Options, l Layout, ports Ports) (_ *ControlPlane, err error) {
	server := fmt.Sprintf("https://127.0.0.1:%d", ports.APIServer)
	if err := ensureCerts(l, o.Name, server); err != nil {
		return nil, err
	}
	cp := &ControlPlane{Layout: l, Ports: ports}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	etcdServers := fmt.Sprintf("https://127.0.0.1:%d", ports.Etcd)
	etcdTLS := EtcdTLS{CAFile: l.PKI("ca.crt"), CertFile: l.PKI("apiserver-etcd-client.crt"), KeyFile: l.PKI("apiserver-etcd-client.key")}
	if o.Etcd != nil {
		etcdServers, etcdTLS = joinURLs(o.Etcd.Endpoints), o.Etcd.TLS
	} else if cp.etcd, err = startEmbeddedEtcd(l, ports.Etcd, ports.EtcdPeer, o.ExtraArgs.Etcd); err != nil {
		return nil, err
	}

	api, err := proc.Start("kube-apiserver", o.Binaries.KubeAPIServer, append(apiServerArgs(l, o, ports, etcdServers, etcdTLS), o.ExtraArgs.APIServer...), l.Log("kube-apiserver"), nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, api)
	cp.Config, err = clientcmd.BuildConfigFromFlags("", l.AdminKubeconfig())
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	if err := api.WaitReady(ctx, 90*time.Second, readyz(cs)); err != nil {
		return nil, err
	}

	kcm, err := proc.Start("kube-controller-manager", o.Binaries.KubeControllerManager, append(controllerManagerArgs(l, ports, o.BindAddress, o.Scheduler), o.ExtraArgs.ControllerManager...), l.Log("kube-controller-manager"), nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, kcm)
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health probe of our own child process
	healthz := fmt.Sprintf("https://127.0.0.1:%d/healthz", ports.ControllerManager)
	if err := kcm.WaitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		return proc.HTTPOK(ctx, insecure, healthz)
	}); err != nil {
		return nil, err
	}
	if !o.Scheduler {
		return cp, nil
	}
	sched, err := proc.Start("kube-scheduler", o.Binaries.KubeScheduler, append(schedulerArgs(l, ports, o.BindAddress), o.ExtraArgs.Scheduler...), l.Log("kube-scheduler"), nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, sched)
	schedHealthz := fmt.Sprintf("https://127.0.0.1:%d/healthz", ports.Scheduler)
	if err := sched.WaitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		return proc.HTTPOK(ctx, insecure, schedHealthz)
	}); err != nil {
		return nil, err
	}
	return cp, nil
}

// Wait returns the first component exit as an
// error, or nil when ctx ends first.
func (cp *ControlPlane) Wait(ctx context.Context) error {
	var etcdErr <-chan error
	if cp.etcd != nil {
		etcdErr = cp.etcd.Err()
	}
	cases := make(chan error, len(cp.procs)+1)
	for _, p := range cp.procs {
		go func() {
			select {
			case <-p.Done():
				cases <- p.ExitError()
			case <-ctx.Done():
			}
		}()
	}
	select {
	case err := <-cases:
		return err
	case err := <-etcdErr:
		return fmt.Errorf("embedded etcd: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// Stop stops the components in reverse order of start. It is safe to call
// more than once.
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop(10 * time.Second)
	}
	cp.procs = nil
	if cp.etcd != nil {
		cp.etcd.Close()
		cp.etcd = nil
	}
}

// loadOrChoosePorts returns the ports on record in the state folder, with
// any missing leased from r, all leased to the folder and free to bind.
func loadOrChoosePorts(ctx context.Context, l Layout, r *ports.Registry) (Ports, error) {
	var p Ports
	if data, err := os.ReadFile(l.Ports()); err == nil {
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("%s: %w", l.Ports(), err)
		}
	}
	owner, err := filepath.Abs(l.Dir)
	if err != nil {
		return p, err
	}
	all := []*int{&p.APIServer, &p.Etcd, &p.EtcdPeer, &p.ControllerManager, &p.Scheduler}
	var onRecord []int // in the kubeconfigs and certificates: kept
	var missing []*int
	for _, port := range all {
		if *port != 0 {
			onRecord = append(onRecord, *port)
		} else {
			missing = append(missing, port)
		}
	}
	if err := r.Hold(ctx, owner, onRecord); err != nil {
		return p, fmt.Errorf("controlplane: %w", err)
	}
	if len(missing) > 0 {
		got, err := r.Reserve(ctx, owner, len(missing))
		if err != nil {
			return p, fmt.Errorf("controlplane: %w", err)
		}
		for i, port := range missing {
			*port = got[i]
		}
	}
	for _, port := range all {
		// A component of an earlier run that was killed may still be
		// releasing its port.
		if err := ports.WaitReleased(ctx, *port); err != nil {
			return p, fmt.Errorf("controlplane: %w", err)
		}
	}
	data, _ := json.MarshalIndent(p, "", "  ")
	return p, os.WriteFile(l.Ports(), data, 0o600)
}
