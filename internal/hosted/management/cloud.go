package management

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Traits are one cloud as the management controller, `clustersync
// cluster` and the dashboard know it without calling it: the engine's
// Traits, and how a Cluster holds the cloud's config and status, as data
// and pure functions. Each cloud returns its own (eks.Traits); its calls
// are the Reader (management half) and the engine.Provider (operator
// half). S is the provider's config spec type, O its operator object.
type Traits[S any, O engine.Object[S]] struct {
	engine.Traits[S, O]
	// ConfigField is the Cluster's spec field of this cloud: "eksConfig".
	ConfigField string
	// Config returns the Cluster's config of this cloud, nil when it has
	// none (another driver's Cluster).
	Config func(c *mgmtv1.Cluster) *S
	// SetConfig sets the Cluster's config of this cloud (an adoption).
	SetConfig func(c *mgmtv1.Cluster, config S)
	// Status returns the addresses of the upstream and applied spec in the
	// Cluster's status of this cloud (status.eksStatus), making that
	// status when it is missing.
	Status func(c *mgmtv1.Cluster) (upstream, applied **S)
	// CopyStatus copies the cloud-side facts o's status keeps (networking,
	// generated resources) into the Cluster's status of this cloud.
	CopyStatus func(c *mgmtv1.Cluster, o O)
	// NodePools counts the node groups (pools) upstream reports, for
	// condition Waiting.
	NodePools func(upstream S) int
}

// Check returns an error naming the first field of t that is not set.
func (t Traits[S, O]) Check() error {
	if err := t.Traits.Check(); err != nil {
		return err
	}
	missing := ""
	switch {
	case t.ConfigField == "":
		missing = "ConfigField"
	case t.Config == nil:
		missing = "Config"
	case t.SetConfig == nil:
		missing = "SetConfig"
	case t.Status == nil:
		missing = "Status"
	case t.CopyStatus == nil:
		missing = "CopyStatus"
	case t.NodePools == nil:
		missing = "NodePools"
	default:
		return nil
	}
	return fmt.Errorf("management.Traits of %q: %s is not set", t.Name, missing)
}

// Reader is the management half of what only a cloud can implement: how
// it is read with the management side's own credentials, and how the
// cluster's API server is reached. engine.Provider is the operator half.
type Reader[S any, O engine.Object[S]] interface {
	// Describe reads the cluster from the cloud; found is false before it
	// exists. o is the operator object as last read (nil before it exists),
	// for facts the read needs (e.g. the managed launch template).
	Describe(ctx context.Context, config S, o O) (up engine.Upstream[S], found bool, err error)
	// Connect returns how to reach the cluster's API server as its
	// administrator, or why it cannot be reached (an AccessError with the
	// condition reason). It may record what it found in the Cluster's
	// status (e.g. that a private endpoint needs a tunnel).
	Connect(ctx context.Context, c *mgmtv1.Cluster, config S, up engine.Upstream[S]) (*rest.Config, error)
}

// AccessError is why a cluster's API server cannot be reached, with the
// reason of condition Connected (ReasonTunnelRequired, ReasonUnreachable,
// ReasonUnauthorized).
type AccessError struct {
	Reason string
	Err    error
}

func (e *AccessError) Error() string { return e.Err.Error() }
func (e *AccessError) Unwrap() error { return e.Err }

// View is a hosted Cluster seen through its cloud (ViewOf): what the
// dashboard and `clustersync cluster show` need of it whatever the cloud.
type View interface {
	// Driver is the cloud, status.driver's value: "EKS", "AKS", "GKE".
	Driver() string
	// Imported is whether the config registers a cluster that exists
	// in the cloud (imported: true): deleting the Cluster lets go of it
	// instead of deleting it.
	Imported() bool
	// Rows is the effective-state table (Rows).
	Rows() []managed.Row
	// NodePools counts the node groups (pools) of the upstream spec; ok
	// is false before the first refresh.
	NodePools() (n int, ok bool)
	// ConfigValue returns the value at path of the Cluster's config of
	// this cloud (JSON, as status.conflicts records values). Errors name
	// the path.
	ConfigValue(path string) ([]byte, error)
	// SetConfigValue sets the field path of the Cluster's config of this
	// cloud to raw (the field's JSON, as status.conflicts records values),
	// as a user editing spec.<cloud>Config would. Errors name the path.
	SetConfigValue(path string, raw []byte) error
	// Conflicts are the fields in conflict the operator recorded, as the
	// Cluster's status.conflicts holds them (copied by the management
	// controller): a reader of the Cluster needs no access to the
	// operator object.
	Conflicts() []hostedv1.FieldConflict
}

// ViewOf returns c seen through the cloud of t; ok is false when c has no
// config of it.
func ViewOf[S any, O engine.Object[S]](t Traits[S, O], c *mgmtv1.Cluster) (View, bool) {
	if t.Config(c) == nil {
		return nil, false
	}
	return view[S, O]{cloud: t, c: c}, true
}

// view implements View for one cloud.
type view[S any, O engine.Object[S]] struct {
	cloud Traits[S, O]
	c     *mgmtv1.Cluster
}

func (v view[S, O]) Driver() string { return v.cloud.Name }

func (v view[S, O]) Imported() bool { return v.cloud.Imported(*v.cloud.Config(v.c)) }

func (v view[S, O]) Rows() []managed.Row {
	rows, _ := Rows(v.cloud, v.c)
	return rows
}

func (v view[S, O]) NodePools() (int, bool) {
	upstream, _ := v.cloud.Status(v.c.DeepCopy())
	if *upstream == nil {
		return 0, false
	}
	return v.cloud.NodePools(**upstream), true
}

func (v view[S, O]) ConfigValue(path string) ([]byte, error) {
	raw, err := managed.Value(*v.cloud.Config(v.c), path, v.cloud.Options)
	if err != nil {
		return nil, fmt.Errorf("spec.%s.%s: %w", v.cloud.ConfigField, path, err)
	}
	return raw, nil
}

func (v view[S, O]) SetConfigValue(path string, raw []byte) error {
	if err := managed.SetValue(v.cloud.Config(v.c), path, raw, v.cloud.Options); err != nil {
		return fmt.Errorf("spec.%s.%s: %w", v.cloud.ConfigField, path, err)
	}
	return nil
}

func (v view[S, O]) Conflicts() []hostedv1.FieldConflict { return v.c.Status.Conflicts }

// Rows returns the effective-state table of c's config of the cloud of
// t (what `clustersync cluster show` prints): per managed field the
// config, upstream (empty before the first refresh), effective and applied
// value. ok is false when c has no config of it.
func Rows[S any, O engine.Object[S]](t Traits[S, O], c *mgmtv1.Cluster) (rows []managed.Row, ok bool) {
	cfg := t.Config(c)
	if cfg == nil {
		return nil, false
	}
	c = c.DeepCopy()
	upstream, applied := t.Status(c)
	var up, app S
	if *upstream != nil {
		up = **upstream
	}
	if *applied != nil {
		app = **applied
	}
	return managed.Rows(*cfg, up, app, t.Options), true
}
