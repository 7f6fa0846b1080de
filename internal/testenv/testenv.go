// Package testenv starts what the integration tests of the virtual-cluster
// syncer run against: a real host cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok fake nodes, through
// internal/hostcluster), a real virtual control plane (internal/virtual/
// controlplane) and the syncer, in process, which a test may stop and start
// again. Start it once per test package from TestMain with Main, and give
// each test its own virtual namespace (NewNamespace).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/runner"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Env is a host cluster, a virtual control plane and a syncer between them.
type Env struct {
	// Name is the virtual cluster's name; HostNamespace its host namespace.
	Name, HostNamespace string
	// Dir holds the state of all three (logs included).
	Dir     string
	Host    *hostcluster.Cluster
	Virtual *controlplane.ControlPlane
	// HostClient and VirtualClient talk to the API servers directly (no cache).
	HostClient, VirtualClient client.Client
	HostKube, VirtualKube     kubernetes.Interface

	syncerStop context.CancelFunc
	syncerDone chan error
}

// Options configure Start.
type Options struct {
	// Name of the virtual cluster (default "vc").
	Name string
	// Nodes is the number of fake host nodes (default 2).
	Nodes int
	// Dir is the state folder; default a new temporary folder, removed by Stop
	// unless a test failed.
	Dir string
}

// Start starts the host cluster and the virtual control plane (not the syncer).
func Start(ctx context.Context, o Options) (*Env, error) {
	if o.Name == "" {
		o.Name = "vc"
	}
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	bins := binaries.Default()
	if err := bins.Check(); err != nil {
		return nil, err
	}
	stopOrphans(ctx, 5*time.Second)
	if o.Dir == "" {
		d, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return nil, err
		}
		o.Dir = d
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if err := claimDir(o.Dir); err != nil {
		return nil, err
	}
	e := &Env{Name: o.Name, HostNamespace: "vc-" + o.Name, Dir: o.Dir}
	host, err := hostcluster.Create(ctx, hostcluster.Options{
		Name: "cs-test-" + rand.String(6), Dir: filepath.Join(o.Dir, "host"), Nodes: o.Nodes, Binaries: bins,
	})
	if err != nil {
		return nil, fmt.Errorf("host cluster: %w", err)
	}
	e.Host = host
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir: filepath.Join(o.Dir, "virtual"), Name: o.Name, ServiceCIDR: host.ServiceCIDR, Binaries: bins,
	})
	if err != nil {
		e.Stop()
		return nil, fmt.Errorf("virtual control plane: %w", err)
	}
	e.Virtual = cp
	if e.HostClient, e.HostKube, err = clients(host.Config); err != nil {
		e.Stop()
		return nil, err
	}
	if e.VirtualClient, e.VirtualKube, err = clients(cp.Config); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// requestTimeout bounds each request of the test clients: a request an API
// server never answers (a starved or stuck server) fails naming its verb
// and URL, and Eventually tries again, instead of hanging the test until
// the package's timeout, which names nothing. The clients make no watches.
const requestTimeout = 30 * time.Second

func clients(cfg *rest.Config) (client.Client, kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Timeout = requestTimeout
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, nil, err
	}
	k, err := kubernetes.NewForConfig(cfg)
	return c, k, err
}

// StartSyncer runs the syncer with cfg (nil: defaults) until StopSyncer,
// and returns once its caches have synced.
func (e *Env) StartSyncer(cfg *config.Config) error {
	if e.syncerStop != nil {
		return errors.New("syncer already running")
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	log := logr.Discard()
	if os.Getenv("CLUSTERSYNC_TEST_LOG") != "" {
		log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(2)))
	}
	ctrllog.SetLogger(log)
	go func() {
		done <- runner.Run(ctx, runner.Options{
			Name: e.Name, HostNamespace: e.HostNamespace, Virtual: e.Virtual.Config, Host: e.Host.Config,
			Config: cfg, StateDir: filepath.Join(e.Dir, "syncer"), Ready: func() { close(ready) }, Log: log,
		})
	}()
	select {
	case <-ready:
		e.syncerStop, e.syncerDone = cancel, done
		return nil
	case err := <-done:
		cancel()
		return fmt.Errorf("syncer exited before ready: %w", err)
	case <-time.After(60 * time.Second):
		cancel()
		return errors.New("syncer not ready after 60s")
	}
}

// StopSyncer stops the syncer and returns its exit error.
func (e *Env) StopSyncer() error {
	if e.syncerStop == nil {
		return nil
	}
	e.syncerStop()
	err := <-e.syncerDone
	e.syncerStop, e.syncerDone = nil, nil
	return err
}

// Stop stops everything and removes the host cluster.
func (e *Env) Stop() {
	_ = e.StopSyncer()
	if e.Virtual != nil {
		e.Virtual.Stop()
	}
	if e.Host != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = e.Host.Delete(ctx)
	}
}

// Main is TestMain's body: it starts an Env with o and the syncer with
// default configuration, runs the tests, stops everything and exits. With
// -short the package's tests are skipped (no API servers); without it,
// missing binaries fail the run.
func Main(m *testing.M, o Options, env **Env) {
	os.Exit(run(m, o, env))
}

func run(m *testing.M, o Options, env **Env) int {
	if _, err := binaries.ForTestMain(); errors.Is(err, binaries.ErrShort) {
		fmt.Println("skipping integration tests:", err)
		return 0
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := Start(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test environment:", err)
		return 1
	}
	*env = e
	if err := e.StartSyncer(nil); err != nil {
		fmt.Fprintln(os.Stderr, "syncer:", err)
		e.Stop()
		return 1
	}
	code := m.Run()
	e.Stop()
	if code == 0 {
		_ = os.RemoveAll(e.Dir)
	} else {
		fmt.Fprintln(os.Stderr, "test state and logs kept in", e.Dir)
	}
	return code
}

// NewNamespace creates a virtual namespace for test t, named after it.
func (e *Env) NewNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(t.Name())
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name)
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-") + "-" + rand.String(4)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.VirtualClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("create virtual namespace %s: %v", name, err)
	}
	// Pods need the namespace's default service account.
	Eventually(t, 30*time.Second, func() error {
		var sa corev1.ServiceAccount
		return e.VirtualClient.Get(context.Background(), client.ObjectKey{Namespace: name, Name: "default"}, &sa)
	})
	return name
}

// HostKey is the host object key of virtual object name/namespace.
func (e *Env) HostKey(name, namespace string) client.ObjectKey {
	return client.ObjectKey{Namespace: e.HostNamespace, Name: hostName(name, namespace, e.Name)}
}

// Eventually calls cond every 100 ms until it returns nil, and fails t with
// cond's last error when timeout passes.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hostName(name, namespace, vc string) string {
	return translate.Translator{VCluster: vc}.HostName(name, namespace)
}
