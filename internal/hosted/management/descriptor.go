package management

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// AppID is the application ID every cloud's management
// controller (refreshes, adoption) sends: the AWS SDK in each request's
// User-Agent ("app/<id>"), the Azure SDK as the User-Agent's first word,
// the Google client in the User-Agent, so that AWS CloudTrail, the Azure
// activity log and the hosted benchmark tell its calls from the
// operator's (OperatorAppID).
const AppID = "clustersync-management"

// OperatorAppID is the application ID the operator of the cloud with key
// (Descriptor.Key) sends, e.g. "clustersync-eks-operator".
func OperatorAppID(key string) string { return "clustersync-" + key + "-operator" }

// Descriptor is one cloud as data — its names, the manager's flags and the
// chart's values of it — and the functions that wire it in: one row of the
// table of clouds (internal/hosted/clouds.All), which the manager, its
// CLI flags, the scheme, the dashboard and the benches range over. Each
// cloud package returns its own from Cloud(); adding a cloud is its folder
// (internal/hosted/<cloud>, api/<cloud>) and one row (docs/development.md,
// "Adding a cloud").
type Descriptor struct {
	// Name is the cloud service in messages and status.driver: "EKS".
	Name string
	// Key is the lower-case name every consumer derives its names from:
	// the manager's flags --<key>-endpoint, --<key>-refresh and
	// --<key>-poll, the manager chart's values key, the controllers
	// (management-<key>, <key>-operator) and OperatorAppID: "eks".
	Key string
	// ConfigField is the Cluster's spec field of this cloud: "eksConfig".
	ConfigField string
	// Product is the cloud service's full name in --help: "Amazon EKS".
	Product string
	// Endpoint says, for --help, what --<key>-endpoint replaces and what
	// is not asked then, e.g. "send AWS calls to this URL instead of AWS".
	Endpoint string
	// Credentials says, for --help, where a cluster's cloud credentials
	// come from without --<key>-endpoint (the Cluster's field naming the
	// Secret and the Secret's keys).
	Credentials string
	// PollWhat says what --<key>-poll spaces out, for --help, e.g. "reads
	// of an EKS cluster that is being created or updated".
	PollWhat string
	// Kind is the cloud's operator object kind (namespaced, in
	// hostedv1.Namespace), e.g. eks.clustersync.io/v1 EKSClusterConfig.
	Kind schema.GroupVersionKind
	// Import is the dashboard's form that imports an existing cluster of
	// this cloud.
	Import ImportForm
	// AddToScheme adds the cloud's operator object kinds (api/<cloud>).
	AddToScheme func(*runtime.Scheme) error
	// Register adds the cloud's management controller and operator to
	// mgr (with the generic Register).
	Register func(mgr ctrl.Manager, o CloudOptions) error
	// View returns a Cluster seen through this cloud; ok is false when the
	// Cluster has no config of it (ViewOf).
	View func(c *mgmtv1.Cluster) (v View, ok bool)
}

// ImportForm is the dashboard's Add form of one cloud: it makes a Cluster
// that imports an existing cluster (imported: true) from the Cluster's
// name and display name, the cloud's Inputs, and a credential Secret.
type ImportForm struct {
	// Title is the form's title and its choice on the Add page: "Import
	// an Amazon EKS cluster".
	Title string
	// Inputs are the cloud's inputs, in order; each is required.
	Inputs []FormInput
	// CredentialField is the config's field naming the credential Secret
	// ("amazonCredentialSecret"), as "namespace:name".
	CredentialField string
	// CredentialKeys names the Secret's keys, for the form's hint.
	CredentialKeys string
	// Config sets the Cluster's config of this cloud from the inputs'
	// values (keyed by FormInput.Name) and the credential Secret, with
	// imported: true.
	Config func(c *mgmtv1.Cluster, values map[string]string, credential string)
}

// FormInput is one input of an ImportForm.
type FormInput struct {
	// Name is the input's name, the same for the same meaning in every
	// cloud: "cloudName" (the cluster's name in the cloud), "region",
	// "location", "resourceGroup", "project".
	Name string
	// Label, Hint and Placeholder are what the form shows.
	Label, Hint, Placeholder string
	// Fields are the config's fields the input sets, relative to the
	// config ("region"): the first names it when it is missing, and the
	// API server's errors on any of them are shown on the input.
	Fields []string
}

// ByKey returns the row of table whose Key is key ("eks"); ok is false for
// none.
func ByKey(table []Descriptor, key string) (d Descriptor, ok bool) {
	for _, d := range table {
		if d.Key == key {
			return d, true
		}
	}
	return Descriptor{}, false
}

// Hosted returns c seen through the cloud of table its config is of; ok is
// false for a Cluster of no cloud (a registered one).
func Hosted(table []Descriptor, c *mgmtv1.Cluster) (View, bool) {
	for _, d := range table {
		if v, ok := d.View(c); ok {
			return v, true
		}
	}
	return nil, false
}

// CloudOptions is what the manager gives one cloud (manager.Options.Clouds,
// the flags --<key>-endpoint, --<key>-refresh and --<key>-poll).
type CloudOptions struct {
	// Endpoint, when not empty, replaces the cloud's API endpoint in every
	// call (an emulator such as `clustersync dev eks`); the cloud's token
	// service is then not asked.
	Endpoint string
	// Refresh is how often the upstream spec of each cluster is read; 0
	// means DefaultRefresh (300 seconds, Rancher's
	// <cloud>-refresh).
	Refresh time.Duration
	// Poll is how often the operator reads a cluster the cloud is
	// changing; 0 means engine.DefaultPoll (30 seconds).
	Poll time.Duration
	// Workers is the number of objects each controller reconciles at
	// once; at least 1.
	Workers int
	// Credentials, when not nil, replaces how the cloud makes its
	// credentials (tests and benches against an emulator): an
	// eks.TokenFunc for EKS clusters' API server tokens, an
	// aks.CredentialFunc, a gke.CredentialFunc. Another type is an error
	// of Register naming the type wanted.
	Credentials any
}

// CredentialsAs returns o.Credentials as T (nil when unset), or an error
// naming the cloud and the type it wants.
func CredentialsAs[T any](o CloudOptions, name string) (T, error) {
	var zero T
	if o.Credentials == nil {
		return zero, nil
	}
	t, ok := o.Credentials.(T)
	if !ok {
		return zero, fmt.Errorf("%s: CloudOptions.Credentials is %T, want %T", name, o.Credentials, zero)
	}
	return t, nil
}

// Controllers returns the two controllers of one cloud, as Register adds
// them to a manager: its management controller and its operator (the
// engine driving its Provider), both with client k and o's Refresh and
// Poll, sharing one engine.Readings, so that a reading of the cloud the
// operator takes serves as the management controller's refresh. The
// caller sets what the manager gives (the management controller's
// APIReader and Events) and, in tests, both clocks (Now).
func Controllers[S any, O engine.Object[S]](k client.Client, o CloudOptions, t Traits[S, O], reader Reader[S, O], provider engine.Provider[S, O]) (*Reconciler[S, O], *engine.Operator[S, O]) {
	readings := &engine.Readings[S]{}
	return &Reconciler[S, O]{Client: k, Traits: t, Reader: reader, Refresh: o.Refresh, Readings: readings},
		&engine.Operator[S, O]{Client: k, Traits: t.Traits, Provider: provider, Poll: o.Poll, Readings: readings}
}

// Register adds one cloud's two controllers (Controllers) to mgr: the
// management controller of its Clusters ("management-<key>", watching
// Clusters and the operator objects they own) and its operator
// ("<key>-operator", watching the operator objects). Both act on a change
// of spec or of annotations: a "keep my value" answer
// (engine.KeepAnnotation) is one, written on the Cluster and copied to its
// operator object. Errors name the controller, or the field of t that is
// not set.
func Register[S any, O engine.Object[S]](mgr ctrl.Manager, o CloudOptions, key string, t Traits[S, O], reader Reader[S, O], provider engine.Provider[S, O]) error {
	if err := t.Check(); err != nil {
		return err
	}
	mgmt, operator := Controllers(mgr.GetClient(), o, t, reader, provider)
	mgmt.APIReader, mgmt.Events = mgr.GetAPIReader(), mgr.GetEventRecorder(AppID)
	opts := controller.Options{MaxConcurrentReconciles: max(o.Workers, 1)}
	if err := ctrl.NewControllerManagedBy(mgr).Named("management-"+key).WithOptions(opts).
		For(&mgmtv1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](specOrAnnotations(), agentConnection()))).
		Owns(t.New(), builder.WithPredicates(phaseChanged())).
		Complete(mgmt); err != nil {
		return fmt.Errorf("management controller of %s clusters: %w", t.Name, err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named(key+"-operator").WithOptions(opts).
		For(t.New(), builder.WithPredicates(specOrAnnotations())).
		Complete(operator); err != nil {
		return fmt.Errorf("%s operator: %w", t.Name, err)
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
// phase, of whether its record is settled (engine.Settled), of its failure
// message, conflicts or observed generation (an update
// finishing, or the operator settling on an edit, means an immediate
// upstream refresh; a conflict found when pushing is reported at once).
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
		return or.Phase != nr.Phase || engine.Settled(or) != engine.Settled(nr) || or.FailureMessage != nr.FailureMessage || !slices.Equal(or.Conflicts, nr.Conflicts) ||
			or.ObservedGeneration != nr.ObservedGeneration
	}}
}

// RefreshHelp is the help of the manager's --<key>-refresh flag (and of
// the chart's value <key>.refresh).
func (d Descriptor) RefreshHelp() string {
	return fmt.Sprintf("seconds between refreshes of each %s cluster's upstream spec (Rancher's %s-refresh)", d.Name, d.Key)
}

// PollHelp is the help of the manager's --<key>-poll flag (and of the
// chart's value <key>.poll).
func (d Descriptor) PollHelp() string { return "seconds between " + d.PollWhat }
