// Package manager runs clustersync's management controllers in one
// controller-runtime manager against a management cluster: the management
// controller of hosted clusters for each cloud (Cluster → EKSClusterConfig,
// AKSClusterConfig or GKEClusterConfig, upstream refresh, managed-field
// sync) and the clouds' operators (EKSClusterConfig → Amazon EKS,
// AKSClusterConfig → Azure AKS, GKEClusterConfig → Google GKE). Two replicas can run: leader election (a coordination.k8s.io
// Lease, client-go's leaderelection through controller-runtime) lets one of
// them reconcile at a time.
package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/go-logr/logr"
	"google.golang.org/api/option"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/gke"
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
	// EKSEndpoint, when not empty, replaces the AWS endpoints of every
	// service the EKS driver calls (an emulator such as `clustersync dev
	// eks`); empty means real AWS.
	EKSEndpoint string
	// Tokens makes the bearer tokens for EKS clusters' API servers; nil
	// means aws-iam-authenticator tokens (eks.Management.Tokens).
	Tokens eks.TokenFunc
	// EKSRefresh is how often the upstream spec of each EKS cluster is
	// refreshed; 0 means management.DefaultRefresh (300 seconds, Rancher's
	// eks-refresh).
	EKSRefresh time.Duration
	// AKSEndpoint, when not empty, replaces the Azure Resource Manager
	// endpoint of every AKS call (an emulator such as `clustersync dev
	// aks`); Azure AD is then not asked for tokens (AKSCredential).
	AKSEndpoint string
	// AKSCredential makes the Azure AD credential of an AKS credential
	// Secret; nil means the Secret's service principal
	// (aks.ClientSecretCredential), or, with AKSEndpoint, a bearer token
	// that is the Secret's client secret (an emulator accepts any token).
	AKSCredential aks.CredentialFunc
	// AKSRefresh is how often the upstream spec of each AKS cluster is
	// refreshed; 0 means management.DefaultRefresh (300 seconds, Rancher's
	// aks-refresh).
	AKSRefresh time.Duration
	// AKSPoll is how often the AKS operator reads a cluster Azure is
	// changing; 0 means engine.DefaultPoll (30 seconds).
	AKSPoll time.Duration
	// GKEEndpoint, when not empty, replaces GKE's endpoint
	// (container.googleapis.com) in every GKE call (an emulator such as
	// `clustersync dev gke`); Google's token service is then not asked
	// (GKECredentials).
	GKEEndpoint string
	// GKECredentials makes the credentials of a GKE credential Secret; nil
	// means the Secret's service-account JSON key
	// (gke.ServiceAccountCredentials), or, with GKEEndpoint, a fixed token
	// (an emulator accepts any).
	GKECredentials gke.CredentialsFunc
	// GKERefresh is how often the upstream spec of each GKE cluster is
	// refreshed; 0 means management.DefaultRefresh (300 seconds, Rancher's
	// gke-refresh).
	GKERefresh time.Duration
	// GKEPoll is how often the GKE operator reads a cluster GKE is
	// changing; 0 means engine.DefaultPoll (30 seconds).
	GKEPoll time.Duration
	// EKSPoll is how often the operator describes a cluster that is being
	// created or updated; 0 means eks.DefaultPoll (30 seconds).
	EKSPoll time.Duration
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
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, eksv1.AddToScheme, aksv1.AddToScheme, gkev1.AddToScheme, mgmtv1.AddToScheme} {
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
	namespaces := []string{eksv1.Namespace}
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

// The application IDs of the hosted-cluster controllers: the AWS SDK sends
// them in every request's User-Agent ("app/<id>"), the Azure SDK as the
// User-Agent's first word, so that AWS CloudTrail, the Azure activity log
// and the hosted benchmark tell their calls apart.
const (
	// ManagementAppID is the management controller's (refreshes, adoption).
	ManagementAppID = "clustersync-management"
	// OperatorAppID is the EKS operator's (create, update, delete).
	OperatorAppID = "clustersync-eks-operator"
	// AKSOperatorAppID is the AKS operator's, sent by the Azure SDK as the
	// User-Agent's application ID (the management controller sends
	// ManagementAppID there).
	AKSOperatorAppID = "clustersync-aks-operator"
	// GKEOperatorAppID is the GKE operator's, sent by the Google client in
	// the User-Agent (the management controller sends ManagementAppID).
	GKEOperatorAppID = "clustersync-gke-operator"
)

// GKEEmulatorToken is the bearer token the GKE clients send to an
// emulator (Options.GKEEndpoint without Options.GKECredentials).
const GKEEmulatorToken = "clustersync-dev"

// Setup registers the hosted-cluster controllers with mgr, for each cloud
// (EKS, AKS, GKE): the management controller (watching Clusters, and the
// operator objects they own) and the cloud's operator (watching its
// operator objects). Only spec changes and
// deletions wake them; the rest is periodic (refresh, poll).
func Setup(mgr ctrl.Manager, o Options) error {
	appID := func(id string) func(*aws.Config) { return func(c *aws.Config) { c.AppID = id } }
	mgmtAWS := eks.NewServicesFactory(o.EKSEndpoint, appID(ManagementAppID))
	opAWS := eks.NewServicesFactory(o.EKSEndpoint, appID(OperatorAppID))
	opts := controller.Options{MaxConcurrentReconciles: o.Workers}
	if o.Workers == 0 {
		opts.MaxConcurrentReconciles = DefaultWorkers
	}
	eksCloud := &eks.Management{Client: mgr.GetClient(), NewServices: mgmtAWS, Tokens: o.Tokens}
	eksOperator := &eks.Reconciler{Client: mgr.GetClient(), NewServices: opAWS, Poll: o.EKSPoll}
	if err := setupProvider(mgr, opts, eksCloud, eksOperator, o.EKSRefresh); err != nil {
		return err
	}
	credential := o.AKSCredential
	if credential == nil && o.AKSEndpoint != "" {
		credential = aks.SecretAsToken
	}
	azureID := func(id string) func(*arm.ClientOptions) {
		return func(c *arm.ClientOptions) { c.Telemetry.ApplicationID = id }
	}
	aksCloud := &aks.Management{Client: mgr.GetClient(), NewClients: aks.NewClientsFactory(o.AKSEndpoint, credential, azureID(ManagementAppID))}
	aksOperator := &aks.Reconciler{Client: mgr.GetClient(), NewClients: aks.NewClientsFactory(o.AKSEndpoint, credential, azureID(AKSOperatorAppID)), Poll: o.AKSPoll}
	if err := setupProvider(mgr, opts, aksCloud, aksOperator, o.AKSRefresh); err != nil {
		return err
	}
	creds := o.GKECredentials
	if creds == nil && o.GKEEndpoint != "" {
		creds = gke.StaticCredentials(GKEEmulatorToken)
	}
	gkeCloud := &gke.Management{Client: mgr.GetClient(), NewClient: gke.NewClientFactory(o.GKEEndpoint, creds, option.WithUserAgent(ManagementAppID))}
	gkeOperator := &gke.Reconciler{Client: mgr.GetClient(), NewClient: gke.NewClientFactory(o.GKEEndpoint, creds, option.WithUserAgent(GKEOperatorAppID)), Poll: o.GKEPoll}
	return setupProvider(mgr, opts, gkeCloud, gkeOperator, o.GKERefresh)
}

// Hosted returns a hosted Cluster seen through whichever cloud it has
// (EKS, AKS, GKE); ok is false for a Cluster of no cloud (a registered
// one).
func Hosted(c *mgmtv1.Cluster) (management.View, bool) {
	if v, ok := management.ViewOf(&eks.Management{}, c); ok {
		return v, true
	}
	if v, ok := management.ViewOf(&aks.Management{}, c); ok {
		return v, true
	}
	return management.ViewOf(&gke.Management{}, c)
}

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

// setupProvider registers one cloud's two controllers: the management
// controller of its Clusters ("management-<cloud>", watching Clusters and
// the operator objects they own) and its operator ("<cloud>-operator",
// watching the operator objects). Both act on a change of spec or of
// annotations: a "keep my value" answer (engine.KeepAnnotation) is one,
// written on the Cluster and copied to its operator object.
func setupProvider[S any, O engine.Object[S]](mgr ctrl.Manager, opts controller.Options, cloud management.Cloud[S, O], operator reconcile.Reconciler, refresh time.Duration) error {
	name := strings.ToLower(cloud.Name())
	mgmt := &management.Reconciler[S, O]{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cloud: cloud,
		Events: mgr.GetEventRecorder("clustersync-management"), Refresh: refresh,
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("management-"+name).WithOptions(opts).
		For(&mgmtv1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](specOrAnnotations(), agentConnection()))).
		Owns(cloud.NewObject(), builder.WithPredicates(phaseChanged())).
		Complete(mgmt); err != nil {
		return fmt.Errorf("management controller of %s clusters: %w", cloud.Name(), err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named(name+"-operator").WithOptions(opts).
		For(cloud.NewObject(), builder.WithPredicates(specOrAnnotations())).
		Complete(operator); err != nil {
		return fmt.Errorf("%s operator: %w", cloud.Name(), err)
	}
	return nil
}

// specOrAnnotations passes the events of an object whose spec (generation)
// or annotations changed.
func specOrAnnotations() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})
}

// agentConnection passes the Cluster updates where the agent's tunnel
// came up or went down (status.agent.connectedSince set or cleared): a
// cluster the manager cannot reach directly is Connected through it.
func agentConnection() predicate.Funcs {
	up := func(c *mgmtv1.Cluster) bool { return c.Status.Agent != nil && c.Status.Agent.ConnectedSince != nil }
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*mgmtv1.Cluster)
		n, ok2 := e.ObjectNew.(*mgmtv1.Cluster)
		return !ok1 || !ok2 || up(o) != up(n)
	}}
}

// phaseChanged passes the operator object events the management
// controller acts on: creation, deletion and a change of the operator's
// phase, failure message or conflicts (an update finishing means an
// immediate upstream refresh; a conflict found when pushing is reported at
// once).
func phaseChanged() predicate.Funcs {
	type recorded interface {
		OperatorRecord() *hostedv1.OperatorStatus
	}
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(recorded)
		n, ok2 := e.ObjectNew.(recorded)
		if !ok1 || !ok2 {
			return true
		}
		or, nr := o.OperatorRecord(), n.OperatorRecord()
		return or.Phase != nr.Phase || or.FailureMessage != nr.FailureMessage || !slices.Equal(or.Conflicts, nr.Conflicts)
	}}
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
