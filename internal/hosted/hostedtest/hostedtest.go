// Package hostedtest is what the hosted-cluster tests share: a real
// kube-apiserver with the hosted-cluster CRDs installed, started once per
// test package from TestMain, and a settable clock for the EKS emulator.
package hostedtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// Env is a kube-apiserver (with etcd and kube-controller-manager) that has
// the hosted-cluster CRDs.
type Env struct {
	// Scheme knows the built-in kinds and both hosted-cluster API groups.
	Scheme *runtime.Scheme
	// Client and Kube talk to the API server directly (no cache).
	Client client.Client
	Kube   kubernetes.Interface
	// Config reaches the API server as its administrator.
	Config *rest.Config
}

// Main is a TestMain body: it starts an Env into *env, runs the tests and
// stops it, returning the exit code. Under -short *env stays nil and the
// tests run without it (tests that need it skip through Require).
func Main(m *testing.M, env **Env) int {
	bins, err := binaries.ForTestMain()
	if errors.Is(err, binaries.ErrShort) {
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "clustersync-hosted-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, Name: "hosted", ServiceCIDR: "10.96.0.0/16", Binaries: bins})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cp.Stop()
	if err := crd.Install(ctx, cp.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e := &Env{Scheme: runtime.NewScheme(), Kube: kubernetes.NewForConfigOrDie(cp.Config), Config: cp.Config}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, eksv1.AddToScheme, mgmtv1.AddToScheme} {
		if err := add(e.Scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if e.Client, err = client.New(cp.Config, client.Options{Scheme: e.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	return m.Run()
}

// Require skips t when env is nil (-short).
func Require(t testing.TB, env *Env) {
	t.Helper()
	if env == nil {
		t.Skip(binaries.ErrShort)
	}
}

// Clock is a clock tests set and advance; its Now goes to
// ekstest.Options.Now. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
