// Package manager runs clustersync's management controllers in one
// controller-runtime manager against a management cluster: for each cloud
// of the table (internal/hosted/clouds: EKS, AKS, GKE) the management
// controller of its hosted clusters (Cluster → the cloud's operator object,
// upstream refresh, managed-field sync) and the cloud's operator (operator
// object → the cloud), the registered clusters' server and the dashboard.
// Two replicas can run: leader election (a coordination.k8s.io Lease,
// client-go's leaderelection through controller-runtime) lets one of them
// reconcile at a time.
package manager

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// Defaults of Options.
const (
	// DefaultLeaderElectionID names the Lease the replicas compete for.
	DefaultLeaderElectionID = "clustersync-manager"
	// DefaultLeaderElectionNamespace holds that Lease.
	DefaultLeaderElectionNamespace = "clustersync-system"
	// DefaultWorkers is how many objects each controller reconciles at once.
	DefaultWorkers = 4
)

// Options configure Run.
type Options struct {
	// Config reaches the management cluster.
	Config *rest.Config
	// Clouds configures each cloud of the table (internal/hosted/clouds),
	// keyed by its Descriptor.Key ("eks", "aks", "gke"): endpoint, refresh
	// and poll periods, credentials for an emulator. A cloud not in the
	// map gets the defaults (real endpoints, a refresh every 300 s, a poll
	// every 30 s); a key of no cloud is an error of Run and Setup.
	Clouds map[string]management.CloudOptions
	// Workers is the number of concurrent reconciles per controller; 0
	// means DefaultWorkers.
	Workers int
	// InstallCRDs installs or updates the CRDs before the controllers
	// start, as `clustersync install crds` does.
	InstallCRDs bool
	// LeaderElection makes this replica wait for the Lease
	// LeaderElectionNamespace/LeaderElectionID before reconciling.
	LeaderElection bool
	// LeaderElectionNamespace and LeaderElectionID name the Lease; empty
	// means the defaults above.
	LeaderElectionNamespace, LeaderElectionID string
	// MetricsAddr serves Prometheus metrics on /metrics ("" or "0": off).
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz ("": off).
	HealthAddr string
	// Log is the manager's logger.
	Log logr.Logger
	// Started, when set, is called once the controllers run (after the
	// Lease was won, with leader election).
	Started func()

	// DashboardAddr, when not empty, serves the web dashboard
	// (internal/dashboard) on this address, plain HTTP unless
	// DashboardTLSCert and DashboardTLSKey are set; every replica serves
	// it, leader or not.
	DashboardAddr string
	// DashboardTLSCert and DashboardTLSKey are the dashboard's serving
	// certificate chain and key (PEM files); with them the session cookie
	// is Secure.
	DashboardTLSCert, DashboardTLSKey string
	// Registered configures registered clusters; a zero value (no
	// ServeAddr and no Listener) leaves them off.
	Registered RegisteredOptions
}

// Scheme returns a scheme with the built-in kinds and clustersync's API
// groups, as the manager uses.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clouds.AddToScheme, mgmtv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run installs the CRDs (Options.InstallCRDs), makes sure the namespaces it
// writes to exist, and runs the controllers until ctx ends. It returns an
// error when the management cluster is unreachable, the CRDs are missing
// (without InstallCRDs) or a controller cannot start.
func Run(ctx context.Context, o Options) error {
	if o.Config == nil {
		return fmt.Errorf("manager: no management cluster config")
	}
	// As controller-runtime's GetConfig: with no QPS set, no client-side
	// rate limit (client-go's default is 5 requests/s, far too few for
	// hundreds of clusters); the API server's priority and fairness
	// protects it.
	if o.Config.QPS == 0 {
		o.Config = rest.CopyConfig(o.Config)
		o.Config.QPS = -1
	}
	if o.InstallCRDs {
		cctx, cancel := context.WithTimeout(ctx, crd.DefaultTimeout)
		err := crd.Install(cctx, o.Config)
		cancel()
		if err != nil {
			return fmt.Errorf("install CRDs: %w", err)
		}
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = DefaultLeaderElectionNamespace
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	namespaces := []string{hostedv1.Namespace}
	if o.LeaderElection || o.DashboardAddr != "" {
		// The Lease's, and the dashboard's sessions'.
		namespaces = append(namespaces, o.LeaderElectionNamespace)
	}
	if err := ensureNamespaces(ctx, o.Config, namespaces...); err != nil {
		return err
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	metricsAddr := o.MetricsAddr
	if metricsAddr == "" {
		metricsAddr = "0"
	}
	mgr, err := ctrl.NewManager(o.Config, ctrl.Options{
		Scheme:  scheme,
		Logger:  o.Log,
		Metrics: metricsserver.Options{BindAddress: metricsAddr},
		// controller-runtime keeps controller names process-wide; Run may
		// be called more than once in a process (replicas in tests).
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		HealthProbeBindAddress:        o.HealthAddr,
		LeaderElection:                o.LeaderElection,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if o.HealthAddr != "" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return err
		}
	}
	if err := Setup(mgr, o); err != nil {
		return err
	}
	if o.Registered.ServeAddr != "" || o.Registered.Listener != nil {
		if err := setupRegistered(ctx, mgr, o); err != nil {
			return err
		}
	}
	if o.DashboardAddr != "" {
		if err := setupDashboard(mgr, o); err != nil {
			return err
		}
	}
	if o.Started != nil {
		started := o.Started
		if err := mgr.Add(leaderRunnable(func(context.Context) error { started(); return nil })); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

// Setup registers the hosted-cluster controllers with mgr, for each cloud
// of the table (clouds.All): the management controller (watching
// Clusters, and the operator objects they own) and the cloud's operator
// (watching its operator objects), with o.Clouds[key]. Only spec changes
// and deletions wake them; the rest is periodic (refresh, poll). It
// returns an error for a key of o.Clouds that names no cloud, or a
// controller that cannot be registered.
func Setup(mgr ctrl.Manager, o Options) error {
	for key := range o.Clouds {
		if _, ok := clouds.ByKey(key); !ok {
			return fmt.Errorf("manager: Options.Clouds[%q]: no such cloud (have %s)", key, strings.Join(keys(), ", "))
		}
	}
	for _, d := range clouds.All() {
		co := o.Clouds[d.Key]
		co.Workers = cmp.Or(o.Workers, DefaultWorkers)
		if err := d.Register(mgr, co); err != nil {
			return err
		}
	}
	return nil
}

// keys lists the clouds' keys, in the table's order.
func keys() []string {
	var ks []string
	for _, d := range clouds.All() {
		ks = append(ks, d.Key)
	}
	return ks
}

// Hosted returns a hosted Cluster seen through whichever cloud it has
// (clouds.Hosted); ok is false for a Cluster of no cloud (a registered
// one).
func Hosted(c *mgmtv1.Cluster) (management.View, bool) { return clouds.Hosted(c) }

// EffectiveRows returns the effective-state table of a hosted Cluster
// (`clustersync cluster show`) from the config and status of whichever
// cloud it has; ok is false for a Cluster of no cloud (a registered one).
func EffectiveRows(c *mgmtv1.Cluster) (rows []managed.Row, ok bool) {
	v, ok := Hosted(c)
	if !ok {
		return nil, false
	}
	return v.Rows(), true
}

// ensureNamespaces creates the namespaces that are missing.
func ensureNamespaces(ctx context.Context, cfg *rest.Config, names ...string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, n := range names {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", n, err)
		}
	}
	return nil
}

// leaderRunnable is a function run once the manager leads.
type leaderRunnable func(context.Context) error

func (f leaderRunnable) Start(ctx context.Context) error { return f(ctx) }
func (f leaderRunnable) NeedLeaderElection() bool        { return true }
